package node

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Hooks let tests (the easyjob package's, which run nodes through the
// public API) hold back heartbeats, simulate a crash and wait for events
// instead of sleeping. Nil in production: every call site checks
// n.hooks != nil first, so a hook costs one nil check.
type Hooks struct {
	// BeforeHeartbeat runs before each heartbeat; an error skips the beat.
	BeforeHeartbeat atomic.Pointer[func(ctx context.Context) error]
	// Crashed makes Run's exit skip every clean-up step.
	Crashed atomic.Bool
	// OnNode is called with the node once it is registered.
	OnNode func(*Node)

	// Signals, armed by the test harness before Run (heartbeat.go,
	// finish.go, recover.go send them):
	HeartbeatWritten Signal[time.Time]               // a heartbeat was written; its local send time
	FireFinished     Signal[repository.FinishResult] // a fire's finish was written (root or child); the result
	RecoverScanned   Signal[int]                     // a recover pass read the orphans; how many it found
}

// Signal is an event the runtime reports to a waiting test, after
// riverqueue/river's testsignal: a buffered channel, nil (and send a no-op)
// unless a test armed it. A send never blocks: when the buffer is full it
// drops the oldest value, so a test waiting later sees the newest events.
// A test arms it before the node runs and reads C.
type Signal[T any] struct{ ch chan T }

// send reports v to the test, if one armed the signal.
func (s *Signal[T]) send(v T) {
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

// Arm makes the runtime's sends reach C. Call it before the node runs.
func (s *Signal[T]) Arm() { s.ch = make(chan T, 64) }

// C is where the armed signal's values arrive.
func (s *Signal[T]) C() <-chan T { return s.ch }
