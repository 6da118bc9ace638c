package node

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

var errLoopStep = errors.New("step failed")

// loopRun runs loop in a goroutine and returns a func that cancels it and
// waits for it to return (failing the test if it does not).
func loopRun(t *testing.T, log zerolog.Logger, interval time.Duration, wake <-chan struct{}, step func(context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		loop(ctx, newOutage(log), "test", interval, wake, step)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Error("loop did not stop within 5s of cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// safeBuffer is a bytes.Buffer the loop may log into while the test reads it.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func loopWait(t *testing.T, ch <-chan time.Time, within time.Duration, what string) time.Time {
	t.Helper()
	select {
	case at := <-ch:
		return at
	case <-time.After(within):
		t.Fatalf("timed out after %v waiting for %s", within, what)
		return time.Time{}
	}
}

// TestLoopFailingStepBacksOff: a step that keeps failing is retried with
// growing waits (no spinning at the interval) and, once it succeeds, the
// loop goes back to the plain interval.
func TestLoopFailingStepBacksOff(t *testing.T) {
	const (
		interval = 20 * time.Millisecond
		fails    = 5
	)
	base := min(interval, time.Second)/2 + time.Millisecond // as loop computes it
	calls := make(chan time.Time, 100)
	var n atomic.Int64
	loopRun(t, zerolog.Nop(), interval, nil, func(context.Context) error {
		k := n.Add(1)
		calls <- time.Now()
		if k <= fails || k == fails+3 {
			return errLoopStep
		}
		return nil
	})
	var at []time.Time
	for i := range fails + 5 {
		at = append(at, loopWait(t, calls, 10*time.Second, "call "+string(rune('0'+i))))
	}
	// After failure k the wait is schedule.Backoff(k): base·2^(k-1) ±20 %. Timers
	// never fire early, so each gap is at least the jitter's lower bound.
	for k := 1; k <= fails; k++ {
		gap := at[k].Sub(at[k-1])
		nominal := base << (k - 1)
		if gap < nominal*4/5-time.Millisecond {
			t.Errorf("gap after failure %d = %v, want >= %v (backoff %v)", k, gap, nominal*4/5, nominal)
		}
	}
	// The last backoff (failure 5: ~176ms) is well above the interval: the
	// loop did not spin.
	if gap := at[fails].Sub(at[fails-1]); gap < 5*interval {
		t.Errorf("gap after %d failures = %v, want well above the interval %v", fails, gap, interval)
	}
	// Success at call 6, 7: back to the interval.
	if gap := at[fails+1].Sub(at[fails]); gap < interval-time.Millisecond {
		t.Errorf("gap after success = %v, want >= interval %v", gap, interval)
	}
	// A new failure after recovery starts from the base again, not from
	// where the earlier streak left off.
	if gap := at[fails+3].Sub(at[fails+2]); gap > 150*time.Millisecond {
		t.Errorf("gap after a fresh failure = %v, want about %v (failures reset on success)", gap, base)
	}
}

// TestLoopFailingStepBounded counts calls of an always-failing step over a
// fixed window: it keeps being called, but nowhere near once per interval.
func TestLoopFailingStepBounded(t *testing.T) {
	const interval = 5 * time.Millisecond
	var n atomic.Int64
	stop := loopRun(t, zerolog.Nop(), interval, nil, func(context.Context) error {
		n.Add(1)
		return errLoopStep
	})
	time.Sleep(400 * time.Millisecond) // a window, not a wait: the calls made over it are counted
	stop()
	// Backoffs from 3.5ms doubling: 3.5+7+14+28+56+112+224 > 400ms, so
	// about 7 calls (the first is immediate); without backoff, 80.
	got := n.Load()
	if got < 3 {
		t.Errorf("failing step called %d times in 400ms: the loop stopped retrying", got)
	}
	if got > 15 {
		t.Errorf("failing step called %d times in 400ms: the loop spins", got)
	}
	t.Logf("%d calls", got)
}

func TestLoopPanicDoesNotKill(t *testing.T) {
	var buf safeBuffer
	log := zerolog.New(&buf)
	calls := make(chan time.Time, 10)
	var n atomic.Int64
	stop := loopRun(t, log, 10*time.Millisecond, nil, func(context.Context) error {
		k := n.Add(1)
		calls <- time.Now()
		if k <= 2 {
			panic("boom")
		}
		return nil
	})
	// Four calls: the third succeeds and logs the recovery before the
	// fourth can start.
	for i := range 4 {
		loopWait(t, calls, 5*time.Second, "call after panic "+string(rune('0'+i)))
	}
	stop()
	out := buf.String()
	if !strings.Contains(out, "boom") || !strings.Contains(out, `"message":"easyjob: loop step panicked"`) {
		t.Errorf("panic not logged as a failure: %s", out)
	}
	if !strings.Contains(out, "loop recovered") {
		t.Errorf("recovery not logged: %s", out)
	}
}

func TestLoopSafeStepPanicError(t *testing.T) {
	err := safeStep(context.Background(), func(context.Context) error { panic(errLoopStep) })
	if err == nil || !strings.Contains(err.Error(), errLoopStep.Error()) || !strings.Contains(err.Error(), "goroutine") {
		t.Fatalf("safeStep = %v, want the panic's value and its stack", err)
	}
	if err := safeStep(context.Background(), func(context.Context) error { return errLoopStep }); err != errLoopStep {
		t.Fatalf("plain error: %v", err)
	}
}

// TestLoopWake: the first pass is immediate; with an interval of an hour,
// a wake runs the next pass at once; several wakes while a pass runs
// coalesce into one more pass.
func TestLoopWake(t *testing.T) {
	wake := make(chan struct{}, 1)
	calls := make(chan time.Time, 10)
	release := make(chan struct{})
	var n atomic.Int64
	loopRun(t, zerolog.Nop(), time.Hour, wake, func(ctx context.Context) error {
		k := n.Add(1)
		calls <- time.Now()
		if k == 2 {
			select { // hold the second pass until the test has poked
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil
	})
	loopWait(t, calls, 5*time.Second, "the first, immediate pass")
	select {
	case <-calls:
		t.Fatal("a second pass without a wake")
	case <-time.After(50 * time.Millisecond):
	}
	wake <- struct{}{}
	loopWait(t, calls, 5*time.Second, "the pass after a wake")
	// Poke several times while pass 2 runs; the buffered channel keeps one.
	for range 3 {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	close(release)
	loopWait(t, calls, 5*time.Second, "the pass for the pokes during pass 2")
	select {
	case <-calls:
		t.Fatal("coalesced wakes ran more than one extra pass")
	case <-time.After(50 * time.Millisecond):
	}
}

// TestLoopStopsOnCancel: cancelling ctx stops the loop whether it is
// waiting or inside a step, and the step is not called again.
func TestLoopStopsOnCancel(t *testing.T) {
	t.Run("waiting", func(t *testing.T) {
		calls := make(chan time.Time, 10)
		stop := loopRun(t, zerolog.Nop(), time.Hour, nil, func(context.Context) error {
			calls <- time.Now()
			return nil
		})
		loopWait(t, calls, 5*time.Second, "first pass")
		stop()
		if len(calls) != 0 {
			t.Fatal("step ran after cancel")
		}
	})
	t.Run("in step", func(t *testing.T) {
		var buf safeBuffer
		inside := make(chan struct{})
		var n atomic.Int64
		stop := loopRun(t, zerolog.New(&buf), time.Millisecond, nil, func(ctx context.Context) error {
			if n.Add(1) == 1 {
				close(inside)
			}
			<-ctx.Done()
			return ctx.Err()
		})
		<-inside
		stop()
		if got := n.Load(); got != 1 {
			t.Errorf("step called %d times", got)
		}
		if strings.Contains(buf.String(), "easyjob: database") {
			t.Errorf("a step cancelled by shutdown was logged as a failure: %s", buf.String())
		}
	})
	t.Run("failing", func(t *testing.T) {
		// Cancel while waiting out a long backoff.
		calls := make(chan time.Time, 10)
		stop := loopRun(t, zerolog.Nop(), time.Hour, nil, func(context.Context) error {
			calls <- time.Now()
			return errLoopStep
		})
		loopWait(t, calls, 5*time.Second, "first pass")
		start := time.Now()
		stop()
		if d := time.Since(start); d > time.Second {
			t.Errorf("stop took %v", d)
		}
	})
}
