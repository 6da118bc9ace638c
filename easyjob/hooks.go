package easyjob

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// testHooks let this package's tests hold back heartbeats, simulate a
// crash and wait for events instead of sleeping. Nil in production: every
// call site checks n.hooks != nil first, so a hook costs one nil check.
type testHooks struct {
	// beforeHeartbeat runs before each heartbeat; an error skips the beat.
	beforeHeartbeat atomic.Pointer[func(ctx context.Context) error]
	// crashed makes Run's exit skip every clean-up step.
	crashed atomic.Bool
	// onNode is called with the node once it is registered.
	onNode func(*node)

	// Signals, armed by the test harness before Run (heartbeat.go,
	// finish.go, recover.go send them):
	heartbeatWritten signal[time.Time]               // a heartbeat was written; its local send time
	fireFinished     signal[repository.FinishResult] // a fire's finish was written (root or child); the result
	recoverScanned   signal[int]                     // a recover pass read the orphans; how many it found
}

// signal is an event the runtime reports to a waiting test, after
// riverqueue/river's testsignal: a buffered channel, nil (and send a no-op)
// unless a test armed it. A send never blocks: when the buffer is full it
// drops the oldest value, so a test waiting later sees the newest events.
// The test side (arm, wait) is in harness_test.go.
type signal[T any] struct{ ch chan T }

// send reports v to the test, if one armed the signal.
func (s *signal[T]) send(v T) {
	if s.ch == nil {
		return
	}
	for {
		select {
		case s.ch <- v:
			return
		default:
		}
		select { // full: drop the oldest value and try again
		case <-s.ch:
		default:
		}
	}
}
