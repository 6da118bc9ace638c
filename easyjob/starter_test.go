package easyjob

import (
	"context"
	"sync"
	"testing"
	"time"

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

// The jobs of a second start first; their start records follow in one
// batch no earlier than startQuiet after the fire time, so the statement
// never competes with the jobs for CPU.
func TestStartRecordsFollowTheBurst(t *testing.T) {
	t.Parallel()
	spy := &startSpy{Store: memory.New()}
	var l ledger
	start(t, fastConfig(spy, "quiet"), everySecond(t, &l, 30))
	waitFor(t, 10*time.Second, "three batches of start records", func() bool { return len(spy.snapshot()) >= 3 })

	firstRun := map[time.Time]time.Time{} // fire time -> earliest job start
	for _, f := range l.snapshot() {
		if r, ok := firstRun[f.scheduled]; !ok || f.started.Before(r) {
			firstRun[f.scheduled] = f.started
		}
	}
	for _, b := range spy.snapshot() {
		for _, sched := range b.scheduled {
			if b.at.Before(sched.Add(startQuiet)) {
				t.Fatalf("start of the %s fire recorded %v after its fire time, want >= %v",
					sched.Format(time.TimeOnly), b.at.Sub(sched), startQuiet)
			}
			if r, ok := firstRun[sched]; !ok || r.After(b.at) {
				t.Fatalf("start of the %s fire recorded before any of its jobs started", sched.Format(time.TimeOnly))
			}
		}
	}
}
