package easyjob

import (
	"testing"
	"time"
)

// TestJoinHandsOverInFinish: two nodes join a node that holds every task.
// Each moving task is handed over by the finish of its current fire (no
// separate release statement, a wake-up instead of a poll), so the new
// owner claims it before its next fire: across the join every task still
// fires once per second, on its second, and the split ends exact.
func TestJoinHandsOverInFinish(t *testing.T) {
	store, group := pgStore(t)
	var l ledger
	const k = 60
	reg := everySecond(t, &l, k)
	// The default poll interval (1 s): a hand-over that waited for a poll
	// would make the next fire late.
	first := start(t, Config{Store: store, Group: group, Strategy: "id_hash"}, reg)
	waitFor(t, 10*time.Second, "the first node firing every task", func() bool {
		return first.n.Stats().Fired >= 2*k
	})
	begin := time.Now()
	nodes := []*testNode{first,
		start(t, Config{Store: store, Group: group, Strategy: "id_hash"}, reg),
		start(t, Config{Store: store, Group: group, Strategy: "id_hash"}, reg),
	}
	// The first node learns of the others from a heartbeat's live view;
	// from then on each finish hands over, so two seconds later the split
	// is final.
	waitAllLive(t, nodes)
	settle := time.Now().Add(2 * time.Second).Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(settle.Add(5 * time.Second))) // the soak: the assertions cover the join
	end := time.Now()

	st := first.n.Stats()
	t.Logf("first node: handed off %d, released %d, fired %d", st.HandedOff, st.Released, st.Fired)
	if st.HandedOff == 0 {
		t.Fatal("no task was handed over by a finish")
	}
	if st.Released != 0 {
		t.Fatalf("%d claims released by separate statements, want 0 (hand-over belongs in the finish)", st.Released)
	}
	assertEachSecondOnce(t, &l, names(k), begin, end.Add(-2*time.Second))
	for _, f := range l.snapshot() {
		if f.scheduled.After(begin) && f.started.Sub(f.scheduled) > 500*time.Millisecond {
			t.Fatalf("%s of %s started %v late: the new owner did not claim it before its fire",
				f.task, f.scheduled.Format(time.TimeOnly), f.started.Sub(f.scheduled))
		}
	}
	counts := perNodeSecond(&l, settle, settle.Add(3*time.Second))
	for sec, m := range counts {
		for _, n := range nodes {
			if got := m[int64(n.n.ID())]; got != k/3 {
				t.Fatalf("second %s: node %d ran %d, want %d (all: %v)", sec.Format(time.TimeOnly), n.n.ID(), got, k/3, m)
			}
		}
	}
}
