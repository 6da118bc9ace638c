package schedule

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff returns the wait before retry number attempt (1-based):
// base·2^(attempt-1) with ±20 % jitter, capped.
func Backoff(attempt int, base, maxWait time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	jitter := time.Duration(rand.Int64N(int64(d)/5 + 1))
	if rand.IntN(2) == 0 {
		return d - jitter
	}
	return min(d+jitter, maxWait)
}

// Sleep waits d or until ctx is done; it reports whether ctx is still live.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
