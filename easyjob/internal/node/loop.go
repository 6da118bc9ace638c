package node

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
)

// loop runs step every interval (or at once when wake fires) until ctx is
// done. A failing step is reported to o (which keeps an outage to a few
// lines) and retried with exponential backoff capped at the interval (at
// least 1 s): a loop never dies silently and never spins. A panicking
// step is logged and treated as a failure.
func loop(ctx context.Context, o *outage, name string, interval time.Duration, wake <-chan struct{}, step func(context.Context) error) {
	loopEvery(ctx, o, name, func() time.Duration { return interval }, wake, step)
}

// loopEvery is loop with an interval read after each successful step.
func loopEvery(ctx context.Context, o *outage, name string, every func() time.Duration, wake <-chan struct{}, step func(context.Context) error) {
	failures := 0
	timer := time.NewTimer(0) // first pass at once
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
		began := time.Now()
		err := safeStep(ctx, step)
		// Fixed rate, not fixed delay: a heartbeat whose statements took
		// 300 ms must still beat once per interval, or its node would drop
		// out of its peers' live views (LiveAfter is only two intervals).
		wait := max(every()-time.Since(began), 0)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			failures++
			// Retries back off, but never beyond the interval (or 1 s): a
			// heartbeat that failed must come back within one interval of
			// the database, or its peers, judging it after an outage, would
			// find it silent.
			wait = schedule.Backoff(failures, min(wait, time.Second)/2+time.Millisecond, max(every(), time.Second))
			o.fail(name, err, wait)
		case failures > 0:
			o.log.Debug().Str("loop", name).Int("failures", failures).Msg("easyjob: loop recovered")
			failures = 0
		}
		timer.Reset(wait)
	}
}

func safeStep(ctx context.Context, step func(context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &stepPanic{value: r, stack: debug.Stack()}
		}
	}()
	return step(ctx)
}

// stepPanic is a loop step's panic, as its error.
type stepPanic struct {
	value any
	stack []byte
}

func (p *stepPanic) Error() string {
	return fmt.Sprintf("easyjob: loop step panicked: %v\n%s", p.value, p.stack)
}
