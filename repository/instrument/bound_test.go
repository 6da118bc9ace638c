package instrument_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/instrument"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// silentStore answers nothing: each call it forwards blocks until its
// context ends, as a read on a connection whose packets vanish would
// block until the driver gives up.
type silentStore struct {
	repository.Store
	sawDeadline chan time.Duration
}

func (s *silentStore) Heartbeat(ctx context.Context, _ repository.Node) (repository.Node, error) {
	return repository.Node{}, s.block(ctx)
}

func (s *silentStore) Finish(ctx context.Context, _ []repository.Finish) ([]repository.FinishResult, error) {
	return nil, s.block(ctx)
}

func (s *silentStore) Pause(ctx context.Context, _, _ string) (repository.Task, error) {
	return repository.Task{}, s.block(ctx)
}

func (s *silentStore) block(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); ok {
		s.sawDeadline <- time.Until(dl)
	} else {
		s.sawDeadline <- 0
	}
	<-ctx.Done()
	return ctx.Err()
}

func TestBounderEndsSilentCalls(t *testing.T) {
	inner := &silentStore{Store: memory.New(), sawDeadline: make(chan time.Duration, 8)}
	rec := &recorder{}
	bounds := instrument.Deadlines(func(op string) time.Duration {
		if op == "Heartbeat" {
			return 20 * time.Millisecond
		}
		return time.Hour
	})
	s := instrument.Wrap(inner, rec, bounds)

	_, err := s.Heartbeat(context.Background(), repository.Node{})
	var te *instrument.TimeoutError
	if !errors.As(err, &te) || te.Op != "Heartbeat" || te.After != 20*time.Millisecond {
		t.Fatalf("Heartbeat on a silent store: err = %v, want a TimeoutError naming Heartbeat and 20ms", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v: want it to match context.DeadlineExceeded", err)
	}
	if d := <-inner.sawDeadline; d <= 0 || d > 20*time.Millisecond {
		t.Fatalf("the store saw a deadline %v away, want at most 20ms", d)
	}
	if got := rec.ends[len(rec.ends)-1]; !errors.As(got.Err, &te) {
		t.Fatalf("the hook saw err %v, want the TimeoutError", got.Err)
	}

	// A caller's sooner deadline wins, and its error is the caller's.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err = s.Finish(ctx, nil)
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &te) {
		t.Fatalf("Finish under the caller's 10ms deadline: err = %v, want the caller's DeadlineExceeded", err)
	}
	if d := <-inner.sawDeadline; d > 10*time.Millisecond {
		t.Fatalf("the store saw a deadline %v away, want the caller's (<= 10ms)", d)
	}

	// The control contract is bounded by the same hook.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := s.Pause(ctx, "g", "t"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Pause with a cancelled context: err = %v", err)
	}
	if d := <-inner.sawDeadline; d < 59*time.Minute {
		t.Fatalf("Pause ran under a deadline %v away, want its own bound of 1h", d)
	}
}

func TestNoBounderLeavesContextAlone(t *testing.T) {
	inner := &silentStore{Store: memory.New(), sawDeadline: make(chan time.Duration, 1)}
	s := instrument.Wrap(inner, &recorder{})
	ctx, cancel := context.WithCancel(context.Background())
	saw := make(chan time.Duration, 1)
	go func() { d := <-inner.sawDeadline; saw <- d; cancel() }()
	if _, err := s.Heartbeat(ctx, repository.Node{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the caller's cancel", err)
	}
	if d := <-saw; d != 0 {
		t.Fatalf("without a Bounder the call ran under a deadline %v away", d)
	}
}
