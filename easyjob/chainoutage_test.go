package easyjob

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// chainFault is one node's database with two faults a test arms: an
// outage (every call fails, outageStore), and one failed claim of a
// given task (the hand-over of a chain step).
type chainFault struct {
	*outageStore
	failClaimOf atomic.Int64 // a task id; 0: none
}

func (s *chainFault) Claim(ctx context.Context, node repository.NodeID, refs []repository.TaskRef) ([]repository.Task, error) {
	if id := s.failClaimOf.Load(); id != 0 && len(refs) == 1 && int64(refs[0].ID) == id && s.failClaimOf.CompareAndSwap(id, 0) {
		return nil, errOutage
	}
	return s.outageStore.Claim(ctx, node, refs)
}

// chainOnce runs a chain step1 -> step2 -> step3 on one node over a
// chainFault, calls fault from step1's job on its third fire, and checks
// that every step of every fire ran exactly once and that the faulted
// fire's steps are in history.
func chainOnce(t *testing.T, fault func(f *chainFault, s repository.Store, group string)) {
	store, group := pgStore(t)
	f := &chainFault{outageStore: &outageStore{Store: store}}
	var l ledger
	var fires atomic.Int64
	var faulted atomic.Value // time.Time: the fire the fault hit
	root := func(ctx context.Context) error {
		l.record(ctx)
		if fires.Add(1) == 3 {
			info, _ := InfoFromContext(ctx)
			faulted.Store(info.ScheduledAt)
			fault(f, store, group)
		}
		return nil
	}
	start(t, fastConfig(f, group), func(s *Scheduler) {
		mustRegister(t, s, "step1", "*/2 * * * * *", root)
		mustRegister(t, s, "step2", "", l.job(nil), Parent("step1"))
		mustRegister(t, s, "step3", "", l.job(nil), Parent("step2"))
	})
	waitFor(t, 30*time.Second, "the faulted fire's chain complete, and one more", func() bool {
		at, ok := faulted.Load().(time.Time)
		if !ok {
			return false
		}
		after := 0
		for _, x := range l.snapshot() {
			if x.task == "step3" && !x.scheduled.Before(at) {
				after++
			}
		}
		return after >= 2
	})
	if d := l.duplicates(); len(d) > 0 {
		for _, x := range l.snapshot() {
			t.Logf("ran %s@%s attempt %d, started %s", x.task, x.scheduled.Format(time.TimeOnly), x.attempt, x.started.Format("15:04:05.000"))
		}
		t.Fatalf("runs twice: %v", d)
	}
	at := faulted.Load().(time.Time)
	for _, name := range []string{"step1", "step2", "step3"} {
		ran := 0
		for _, x := range l.snapshot() {
			if x.task == name && x.scheduled.Equal(at) {
				ran++
			}
		}
		if ran != 1 {
			t.Errorf("%s ran %d times for the faulted fire %v, want once", name, ran, at.Format(time.TimeOnly))
		}
		waitFor(t, 10*time.Second, name+"'s run of the faulted fire in history", func() bool {
			h, err := store.History(context.Background(), group, name, repository.HistoryFilter{Limit: 50})
			if err != nil {
				return false
			}
			for _, x := range h {
				if x.ScheduledAt.Equal(at) && x.Status == repository.ExecSucceeded {
					return true
				}
			}
			return false
		})
	}
}

// TestChainRootAcrossOutage: the database goes away while a chain's root
// runs and stays away past DeadAfter (the node drops its claims). The
// root's run is recorded once the database answers, it does not run
// again, and its steps run once, on the fire's next run (issue 30,
// item 1).
func TestChainRootAcrossOutage(t *testing.T) {
	t.Parallel()
	chainOnce(t, func(f *chainFault, _ repository.Store, _ string) {
		f.down.Store(true)
		go func() {
			time.Sleep(1500 * time.Millisecond) // the outage: past DeadAfter (600 ms here)
			f.down.Store(false)
		}()
	})
}

// TestChainStepHandOverFails: the claim of a chain's second step fails
// (the database went away at the hand-over, as in a failover). The steps
// left run on the fire's next run, once; the root does not run again
// (issue 30, item 2).
func TestChainStepHandOverFails(t *testing.T) {
	t.Parallel()
	chainOnce(t, func(f *chainFault, s repository.Store, group string) {
		if step2, err := s.Task(context.Background(), group, "step2"); err == nil {
			f.failClaimOf.Store(int64(step2.ID))
		}
	})
}
