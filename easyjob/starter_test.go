package easyjob

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/node"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// startSpy records when each batch of start records reached the store.
type startSpy struct {
	*memory.Store
	mu      sync.Mutex
	batches []startBatch
}

type startBatch struct {
	at        time.Time
	scheduled []time.Time
}

func (s *startSpy) StartExecutions(ctx context.Context, reqs []repository.ExecStart) ([]repository.StartResult, error) {
	b := startBatch{at: time.Now()}
	for _, r := range reqs {
		b.scheduled = append(b.scheduled, r.Execution.ScheduledAt)
	}
	s.mu.Lock()
	s.batches = append(s.batches, b)
	s.mu.Unlock()
	return s.Store.StartExecutions(ctx, reqs)
}

func (s *startSpy) snapshot() []startBatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]startBatch(nil), s.batches...)
}

// A run shorter than node.StartRecordAfter gets no start record: its finish
// writes its history row once, whole.
func TestShortRunsWrittenOnce(t *testing.T) {
	t.Parallel()
	spy := &startSpy{Store: memory.New()}
	var l ledger
	start(t, fastConfig(spy, "short"), everySecond(t, &l, 20))
	waitFor(t, 10*time.Second, "three fires of every task", func() bool { return l.count("t0019") >= 3 })
	if b := spy.snapshot(); len(b) != 0 {
		t.Fatalf("short runs got %d batches of start records, want none", len(b))
	}
	xs, err := spy.History(t.Context(), "short", "t0000", repository.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) == 0 {
		t.Fatal("no history for t0000")
	}
	for _, x := range xs {
		if x.Status != repository.ExecSucceeded || x.FinishedAt.Before(x.StartedAt) || x.ScheduledAt.IsZero() {
			t.Errorf("appended run = %+v, want a whole succeeded row", x)
		}
	}
}

// A run still going node.StartRecordAfter after its fire is recorded as
// running, and its finish closes that row.
func TestLongRunRecordedWhileRunning(t *testing.T) {
	t.Parallel()
	spy := &startSpy{Store: memory.New()}
	release := make(chan struct{})
	var once sync.Once
	start(t, fastConfig(spy, "long"), func(s *Scheduler) {
		if err := s.Register("long", "* * * * * *", func(ctx context.Context) error {
			once.Do(func() { <-release })
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	history := func() []repository.Execution {
		xs, err := spy.History(t.Context(), "long", "long", repository.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return xs
	}
	waitFor(t, 10*time.Second, "a running row for the long run", func() bool {
		xs := history()
		return len(xs) > 0 && xs[len(xs)-1].Status == repository.ExecRunning
	})
	for _, b := range spy.snapshot() {
		for _, sched := range b.scheduled {
			if b.at.Sub(sched) < node.StartRecordAfter {
				t.Errorf("start of the %s fire recorded %v after its fire time, want >= %v",
					sched.Format(time.TimeOnly), b.at.Sub(sched), node.StartRecordAfter)
			}
		}
	}
	first := history()[len(history())-1]
	close(release)
	waitFor(t, 10*time.Second, "the long run closed", func() bool {
		for _, x := range history() {
			if x.ID == first.ID {
				return x.Status == repository.ExecSucceeded
			}
		}
		return false
	})
}

// stealSpy gives the claim of the first start record back before
// writing it, as a peer's takeover would: that start finds the claim lost.
type stealSpy struct {
	*memory.Store
	once sync.Once
}

func (s *stealSpy) StartExecutions(ctx context.Context, reqs []repository.ExecStart) ([]repository.StartResult, error) {
	var err error
	s.once.Do(func() { _, err = s.Release(ctx, []repository.Claim{reqs[0].Claim}) })
	if err != nil {
		return nil, err
	}
	return s.Store.StartExecutions(ctx, reqs)
}

// A long run whose start record finds the claim lost has its job's
// context cancelled, and its run still in the history, as fenced: a run
// that began is never missing from it.
func TestLostStartRecordedFenced(t *testing.T) {
	t.Parallel()
	spy := &stealSpy{Store: memory.New()}
	cancelled := make(chan struct{})
	var once sync.Once
	start(t, fastConfig(spy, "lost"), func(s *Scheduler) {
		if err := s.Register("long", "* * * * * *", func(ctx context.Context) error {
			ran := false
			once.Do(func() {
				ran = true
				<-ctx.Done()
				close(cancelled)
			})
			if ran {
				return ctx.Err()
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the job whose claim was lost was not cancelled")
	}
	waitFor(t, 10*time.Second, "the cancelled run recorded as fenced", func() bool {
		xs, err := spy.History(t.Context(), "lost", "long", repository.HistoryFilter{Status: repository.ExecFenced})
		return err == nil && len(xs) == 1 && xs[0].Error == context.Canceled.Error()
	})
}
