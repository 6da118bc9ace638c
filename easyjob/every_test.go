package easyjob

import (
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// TestEveryIntervalAcrossFailover: an @every 90s task whose node dies
// holding the claim of its next fire is fired by a peer (late, once, for
// the same scheduled time) and then keeps the 90 s grid: the fire after
// the late one is exactly 90 s after the scheduled time, on time, once.
func TestEveryIntervalAcrossFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("waits one 90 s period")
	}
	t.Parallel()
	const period = 90 * time.Second
	// The store's clock is shifted so that a grid point G is 3 s ahead: the
	// test waits one period, not up to two. Nodes measure the offset to
	// the store's clock as they do with a database's.
	local := time.Now()
	floor := time.Unix(0, local.UnixNano()/int64(period)*int64(period))
	shift := floor.Add(period).Sub(local) - 3*time.Second
	store := memory.New(memory.WithClock(func() time.Time { return time.Now().Add(shift) }))
	var l ledger
	reg := func(s *Scheduler) { mustRegister(t, s, "every90", "@every 90s", l.job(nil)) }
	cfg := fastConfig(store, "every")

	a := start(t, cfg, reg)
	var claim repository.Task
	waitFor(t, 5*time.Second, "node A to claim the fire at G", func() bool {
		claim, _ = store.Task(t.Context(), "every", "every90")
		return claim.Status == repository.TaskDoing && claim.NodeID == a.n.ID()
	})
	g := claim.NextStartTime
	if g.Unix()%90 != 0 {
		t.Fatalf("claimed fire %v is not on the grid", g)
	}
	a.crash(t) // before G: the claim dies with it
	if k := l.count("every90"); k != 0 {
		t.Fatalf("A fired before its crash: %d", k)
	}
	b := start(t, cfg, reg)

	waitFor(t, 10*time.Second, "B to fire G after recovering A's claim", func() bool { return l.count("every90") == 1 })
	waitFor(t, period+10*time.Second, "the fire at G + 90 s", func() bool { return l.count("every90") == 2 })
	time.Sleep(500 * time.Millisecond)
	fires := l.snapshot()
	if len(fires) != 2 {
		t.Fatalf("fires %+v, want 2", fires)
	}
	for i, f := range fires {
		if f.node != int64(b.n.ID()) {
			t.Errorf("fire %d on node %d, want B (%d)", i, f.node, b.n.ID())
		}
		if want := g.Add(time.Duration(i) * period); !f.scheduled.Equal(want) {
			t.Errorf("fire %d scheduled at %v, want %v (no drift)", i, f.scheduled, want)
		}
	}
	// The first fire is late by the failover; the next one is on time.
	if lag := fires[1].started.Add(shift).Sub(fires[1].scheduled); lag < 0 || lag > 500*time.Millisecond {
		t.Errorf("the fire after the failover started %v after its time", lag)
	}
	if d := l.duplicates(); len(d) > 0 {
		t.Errorf("fired twice: %v", d)
	}
}

// TestEveryFromCreation: "@every 7s" with EveryFromCreation fires at the
// task's creation (to the second) plus whole intervals, not on the epoch
// grid, and a second node and a restart keep that grid (issue 30, item 4).
func TestEveryFromCreation(t *testing.T) {
	const period = 7 * time.Second
	store := memory.New()
	var l ledger
	reg := func(s *Scheduler) {
		mustRegister(t, s, "anchored", "@every 7s", l.job(nil), EveryFromCreation())
		mustRegister(t, s, "grid", "@every 7s", l.job(nil))
	}
	cfg := fastConfig(store, "anchored")
	a := start(t, cfg, reg)
	row, err := store.Task(t.Context(), "anchored", "anchored")
	if err != nil {
		t.Fatal(err)
	}
	anchor := row.CreatedAt.Truncate(time.Second)
	if d := row.NextStartTime.Sub(anchor); d != period {
		t.Fatalf("first fire %v is %v after the creation %v, want %v", row.NextStartTime, d, anchor, period)
	}
	start(t, cfg, reg) // a peer reads the same anchor
	waitFor(t, 3*period, "two anchored fires", func() bool { return l.count("anchored") >= 2 })
	a.stop(t)
	waitFor(t, 2*period, "a fire after the restart", func() bool { return l.count("anchored") >= 3 })
	for _, f := range l.snapshot() {
		d := f.scheduled.Sub(anchor)
		switch f.task {
		case "anchored":
			if d%period != 0 {
				t.Errorf("anchored fire %v is %v after the creation: off the creation's grid", f.scheduled, d)
			}
		case "grid":
			if f.scheduled.UnixNano()%int64(period) != 0 {
				t.Errorf("grid fire %v is off the epoch grid", f.scheduled)
			}
		}
	}
}
