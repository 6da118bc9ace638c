package easyjob

import (
	"context"
	"sync/atomic"
)

// testHooks let this package's tests hold back heartbeats and simulate a
// crash. Nil in production.
type testHooks struct {
	// beforeHeartbeat runs before each heartbeat; an error skips the beat.
	beforeHeartbeat atomic.Pointer[func(ctx context.Context) error]
	// crashed makes Run's exit skip every clean-up step.
	crashed atomic.Bool
	// onNode is called with the node once it is registered.
	onNode func(*node)
}
