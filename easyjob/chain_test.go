package easyjob

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/node"
	"github.com/easyjob-go/easyjob/repository"
)

// TestChainRunsInOrder: the classic four-step chain runs in order on every
// fire, on one node, each child's execution under its parent's.
func TestChainRunsInOrder(t *testing.T) {
	t.Parallel()
	store, group := pgStore(t)
	var l ledger
	reg := func(s *Scheduler) {
		mustRegister(t, s, "step1", "* * * * * *", l.job(nil))
		mustRegister(t, s, "step2", "", l.job(nil), Parent("step1"))
		mustRegister(t, s, "step3", "", l.job(nil), Parent("step2"))
		mustRegister(t, s, "step4", "", l.job(nil), Parent("step3"))
	}
	for range 3 {
		start(t, Config{Store: store, Group: group}, reg)
	}
	waitFor(t, 10*time.Second, "three full chains", func() bool { return l.count("step4") >= 3 })
	fires := l.snapshot()
	byFire := map[time.Time][]fire{}
	for _, f := range fires {
		byFire[f.scheduled] = append(byFire[f.scheduled], f)
	}
	complete := 0
	for at, fs := range byFire {
		var order []string
		for _, f := range fs {
			order = append(order, f.task)
			if f.node != fs[0].node {
				t.Errorf("fire %s ran on several nodes: %v", at.Format(time.TimeOnly), fs)
			}
		}
		if len(order) == 4 {
			complete++
			if order[0] != "step1" || order[1] != "step2" || order[2] != "step3" || order[3] != "step4" {
				t.Errorf("fire %s ran out of order: %v", at.Format(time.TimeOnly), order)
			}
		}
	}
	if complete < 3 {
		t.Fatalf("only %d complete chains", complete)
	}
	h, err := store.History(context.Background(), group, "step3", repository.HistoryFilter{Limit: 1, Status: repository.ExecSucceeded})
	if err != nil || len(h) != 1 || h[0].ParentExecutionID == 0 || h[0].Status != repository.ExecSucceeded {
		t.Fatalf("step3 history %+v, %v: want a succeeded execution under step2's", h, err)
	}
	parent, _ := store.History(context.Background(), group, "step2", repository.HistoryFilter{Limit: 50})
	found := false
	for _, p := range parent {
		found = found || p.ID == h[0].ParentExecutionID
	}
	if !found {
		t.Errorf("step3's parent execution %d is not a step2 execution", h[0].ParentExecutionID)
	}
}

// TestChainFailureSkipsSubtree: a failing step2 skips step3 and step4 and
// is recorded as failed; its sibling step2b still runs.
func TestChainFailureSkipsSubtree(t *testing.T) {
	t.Parallel()
	store, group := pgStore(t)
	var l ledger
	reg := func(s *Scheduler) {
		mustRegister(t, s, "step1", "* * * * * *", l.job(nil))
		mustRegister(t, s, "step2", "", l.job(errors.New("step2 broke")), Parent("step1"))
		mustRegister(t, s, "step3", "", l.job(nil), Parent("step2"))
		mustRegister(t, s, "step4", "", l.job(nil), Parent("step3"))
		mustRegister(t, s, "step2b", "", l.job(nil), Parent("step1"))
	}
	start(t, Config{Store: store, Group: group}, reg)
	start(t, Config{Store: store, Group: group}, reg)
	waitFor(t, 10*time.Second, "three fires of step1", func() bool { return l.count("step2b") >= 3 })
	if k := l.count("step3") + l.count("step4"); k != 0 {
		t.Fatalf("step3/step4 ran %d times after step2 failed", k)
	}
	if l.count("step2") < 3 {
		t.Fatalf("step2 ran %d times", l.count("step2"))
	}
	st := historyStatuses(t, store, group, "step2")
	if st[repository.ExecFailed] < 3 {
		t.Fatalf("step2 history %v: want its failures recorded", st)
	}
	task, err := store.Task(context.Background(), group, "step2")
	if err != nil || task.LastStatus != repository.ExecFailed || task.LastError != "step2 broke" {
		t.Fatalf("step2 row %+v, %v: want last status failed with the error", task, err)
	}
}

// TestChildCronGates: a child with its own cron runs only when that cron
// came due since its last run, not after every parent success.
func TestChildCronGates(t *testing.T) {
	t.Parallel()
	store, group := pgStore(t)
	var l ledger
	reg := func(s *Scheduler) {
		mustRegister(t, s, "parent", "* * * * * *", l.job(nil))
		mustRegister(t, s, "gated", "*/3 * * * * *", l.job(nil), Parent("parent"))
	}
	start(t, Config{Store: store, Group: group}, reg)
	waitFor(t, 15*time.Second, "nine parent runs", func() bool { return l.count("parent") >= 9 })
	p, g := l.count("parent"), l.count("gated")
	if g < 2 || g > p/3+1 {
		t.Fatalf("gated child ran %d times for %d parent runs; want about one in three", g, p)
	}
}

func mustRegister(t *testing.T, s *Scheduler, name, cron string, fn Func, opts ...Option) {
	t.Helper()
	if err := s.Register(name, cron, fn, opts...); err != nil {
		t.Fatal(err)
	}
}

// TestChainLongRoot: a root that runs past node.StartRecordAfter gets its
// start record while running; its children still run under that row, and
// the worker keeps its slot for them (it must not give it back twice).
func TestChainLongRoot(t *testing.T) {
	t.Parallel()
	store, group := pgStore(t)
	var l ledger
	long := func(ctx context.Context) error {
		l.record(ctx)
		select {
		case <-time.After(node.StartRecordAfter + 300*time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	start(t, Config{Store: store, Group: group}, func(s *Scheduler) {
		mustRegister(t, s, "root", "*/5 * * * * *", long)
		mustRegister(t, s, "child", "", l.job(nil), Parent("root"))
	})
	// The root's run closes after its children's: wait for both.
	waitFor(t, 15*time.Second, "a child's run under a succeeded long root", func() bool {
		h, _ := store.History(context.Background(), group, "child", repository.HistoryFilter{Limit: 1, Status: repository.ExecSucceeded})
		if len(h) != 1 {
			return false
		}
		root, _ := store.History(context.Background(), group, "root", repository.HistoryFilter{Limit: 10, Status: repository.ExecSucceeded})
		for _, r := range root {
			if r.ID == h[0].ParentExecutionID {
				return true
			}
		}
		return false
	})
}

// TestChainRunTimesAreTheJobs: a run's start and end in history are its
// job's, measured where it ran: a 1 ms chain root is recorded as taking
// about that and as ending before its child began, not as lasting until
// its finish was written after the whole chain (issue 30, item 8).
func TestChainRunTimesAreTheJobs(t *testing.T) {
	t.Parallel()
	store, group := pgStore(t)
	var l ledger
	slow := func(ctx context.Context) error {
		l.record(ctx)
		time.Sleep(150 * time.Millisecond) // the job's own work
		return nil
	}
	start(t, fastConfig(store, group), func(s *Scheduler) {
		mustRegister(t, s, "root", "* * * * * *", l.job(nil))
		mustRegister(t, s, "child", "", slow, Parent("root"))
	})
	waitFor(t, 10*time.Second, "two complete chains", func() bool {
		h, _ := store.History(context.Background(), group, "child", repository.HistoryFilter{Status: repository.ExecSucceeded})
		return len(h) >= 2
	})
	children, err := store.History(context.Background(), group, "child", repository.HistoryFilter{Status: repository.ExecSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	roots, err := store.History(context.Background(), group, "root", repository.HistoryFilter{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]repository.Execution{}
	for _, r := range roots {
		byID[r.ID] = r
	}
	for _, c := range children {
		r, ok := byID[c.ParentExecutionID]
		if !ok || r.FinishedAt.IsZero() {
			continue
		}
		if took := r.FinishedAt.Sub(r.StartedAt); took > 100*time.Millisecond {
			t.Errorf("root run %d recorded as taking %v; its job takes about 1ms (the child's 150ms is not the root's)", r.ID, took)
		}
		if r.FinishedAt.After(c.StartedAt) {
			t.Errorf("root run %d recorded as ending at %v, after its child began at %v", r.ID, r.FinishedAt, c.StartedAt)
		}
		if took := c.FinishedAt.Sub(c.StartedAt); took < 150*time.Millisecond {
			t.Errorf("child run %d recorded as taking %v, less than the 150ms its job slept", c.ID, took)
		}
	}
}
