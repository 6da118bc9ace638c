package easyjob

// One test per defect of the 2019 original (DESIGN.md section 8) that
// fails if the defect returns. Defects 3 and 8 are covered elsewhere:
// TestSilentNodeIsFenced (a finish after recovery is fenced and the zombie's
// run is cancelled) and the strategy package's property tests plus the
// store conformance suite's LiveNodes ordering (row numbers from an ordered
// live set; ids compared by value).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
	"github.com/easyjob-go/easyjob/strategy"
)

// Defect 1: the fetch query was inverted (tasks fetched only once long
// overdue). A new task must fire on its very first second, on time.
func TestDefectFetchNotInverted(t *testing.T) {
	t.Parallel()
	var l ledger
	start(t, fastConfig(memory.New(), "d1"), func(s *Scheduler) { mustRegister(t, s, "x", "* * * * * *", l.job(nil)) })
	waitFor(t, 3*time.Second, "first fire", func() bool { return l.count("x") >= 2 })
	for _, f := range l.snapshot() {
		if lag := f.started.Sub(f.scheduled); lag > 300*time.Millisecond {
			t.Fatalf("fire %s started %v late", f.scheduled.Format(time.TimeOnly), lag)
		}
	}
}

// Defect 2: the recover thread exited on its first quiet scan, and tasks of
// a node whose row was deleted were never found. Here recovery runs after
// many quiet scans and finds the tasks of a crashed node whose row is gone.
func TestDefectRecoverAfterQuietScansAndDeletedRow(t *testing.T) {
	t.Parallel()
	store := memory.New()
	var l ledger
	reg := everySecond(t, &l, 10)
	cfg := fastConfig(store, "d2")
	cfg.Strategy = "id_hash"
	a := start(t, cfg, reg)
	b := start(t, cfg, reg)
	for range 5 { // several quiet recover passes
		waitSignal(t, &a.hooks.RecoverScanned, 5*time.Second, "a quiet recover pass", func(orphans int) bool { return orphans == 0 })
	}
	var held []repository.Task
	waitFor(t, 5*time.Second, "node b holding claims", func() bool {
		held, _ = store.HeldBy(context.Background(), b.n.ID())
		return len(held) > 0
	})
	b.crash(t)
	if err := store.DeleteNode(context.Background(), b.n.ID()); err != nil {
		t.Fatal(err)
	}
	crashed := time.Now()
	mine := map[string]bool{}
	for _, h := range held {
		mine[h.Name] = true
	}
	waitFor(t, 3*time.Second, "the deleted node's tasks fire on the survivor", func() bool {
		return len(firstFiresAfter(&l, mine, crashed, int64(b.n.ID()))) == len(mine)
	})
	tasks, _ := store.Tasks(context.Background(), "d2")
	for _, task := range tasks {
		if task.Status == repository.TaskDoing && task.NodeID == b.n.ID() {
			t.Errorf("task %s still held by the deleted node", task.Name)
		}
	}
	_ = a
}

// Defect 4a: one failure stopped a cron task for good.
func TestDefectFailureKeepsFiring(t *testing.T) {
	t.Parallel()
	var l ledger
	start(t, fastConfig(memory.New(), "d4a"), func(s *Scheduler) {
		mustRegister(t, s, "fails", "* * * * * *", l.job(errors.New("always")))
	})
	waitFor(t, 5*time.Second, "an always-failing task firing again and again", func() bool { return l.count("fails") >= 3 })
}

// Defect 4b: a claim the pool could not take stayed stuck in doing. A node
// with one busy worker gives its other due fires back; a peer runs them.
func TestDefectFullPoolGivesBack(t *testing.T) {
	t.Parallel()
	store := memory.New()
	var l ledger
	release := make(chan struct{})
	defer close(release)
	reg := func(s *Scheduler) {
		mustRegister(t, s, "hog", "* * * * * *", func(ctx context.Context) error {
			l.record(ctx)
			select { // holds its worker until the test ends
			case <-release:
			case <-ctx.Done():
			}
			return nil
		})
		for _, name := range []string{"a", "b", "c"} {
			mustRegister(t, s, name, "* * * * * *", l.job(nil))
		}
	}
	narrow := fastConfig(store, "d4b")
	narrow.Workers, narrow.StartDeadline = 1, 300*time.Millisecond
	first := start(t, narrow, reg) // alone at first: it claims everything
	waitFor(t, 3*time.Second, "the hog holding the only worker", func() bool { return l.count("hog") == 1 })
	peer := start(t, fastConfig(store, "d4b"), reg)
	waitFor(t, 5*time.Second, "a, b and c fired on the peer", func() bool {
		on := map[string]bool{}
		for _, f := range l.snapshot() {
			if f.node == int64(peer.n.ID()) {
				on[f.task] = true
			}
		}
		return on["a"] && on["b"] && on["c"]
	})
	_ = first
}

// Defect 5: nothing ran when recovery was switched off (the heartbeat was
// tied to it). With recovery effectively off, tasks fire and heartbeats go on.
func TestDefectRunsWithoutRecovery(t *testing.T) {
	t.Parallel()
	store := memory.New()
	var l ledger
	cfg := fastConfig(store, "d5")
	cfg.RecoverInterval = time.Hour
	n := start(t, cfg, func(s *Scheduler) { mustRegister(t, s, "x", "* * * * * *", l.job(nil)) })
	waitFor(t, 3*time.Second, "fires without recovery", func() bool { return l.count("x") >= 2 })
	live, _ := store.LiveNodes(context.Background(), "d5", 2*cfg.HeartbeatInterval)
	if !strategy.IsLive(live, n.n.ID()) {
		t.Fatal("node not live: heartbeats depend on recovery")
	}
}

// Defect 6: loaders polled every 100 ms and spun on empty results. An idle
// node (nothing due) makes only a few store calls per second.
func TestDefectIdleNodeDoesNotSpin(t *testing.T) {
	t.Parallel()
	store := memory.New()
	n := start(t, Config{Store: store, Group: "d6"}, func(s *Scheduler) {
		mustRegister(t, s, "yearly", "0 0 0 1 1 *", func(context.Context) error { return nil })
	})
	// Start-up is over once the first heartbeat is written and the
	// loader's first pass found nothing due.
	n.beatAfter(t, time.Time{}, 5*time.Second)
	waitFor(t, 5*time.Second, "the loader idle", n.n.Idle)
	before := store.Calls()
	time.Sleep(4 * time.Second) // a window, not a wait: the calls made over it are counted
	perSecond := float64(store.Calls()-before) / 4
	// By design about 2.85 a second: a heartbeat and a recover pass each
	// second, the live view every other beat, the idle loader every 4 s,
	// reconcile every 10 s; a 4 s window counts 11 to 13 of them.
	if perSecond > 3.5 {
		t.Fatalf("idle node makes %.1f store calls per second, want <= 3.5", perSecond)
	}
	t.Logf("idle node: %.2f store calls per second", perSecond)
}

// Defect 7: local and database clocks were mixed. The store's clock is an
// hour ahead of this process's: fires still happen on time by the store's
// clock.
func TestDefectStoreClockDecides(t *testing.T) {
	t.Parallel()
	skew := time.Hour
	store := memory.New(memory.WithClock(func() time.Time { return time.Now().Add(skew) }))
	lags := make(chan time.Duration, 16)
	start(t, fastConfig(store, "d7"), func(s *Scheduler) {
		mustRegister(t, s, "x", "* * * * * *", func(ctx context.Context) error {
			info, _ := InfoFromContext(ctx)
			now, _ := store.Now(ctx)
			select {
			case lags <- now.Sub(info.ScheduledAt):
			default:
			}
			return nil
		})
	})
	for range 3 {
		select {
		case lag := <-lags:
			if lag < 0 || lag > 300*time.Millisecond {
				t.Fatalf("fire ran %v after its time by the store clock", lag)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no fire with a skewed store clock")
		}
	}
}
