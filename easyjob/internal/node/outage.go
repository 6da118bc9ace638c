package node

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// remindEvery is how often an outage that goes on is logged again.
const remindEvery = time.Minute

// outage keeps a database outage to a few log lines, however many calls
// fail in it: one when the database stops answering, a reminder a minute
// while it stays away, and one when it answers again, with how long it
// was away. Each failed call is logged at debug level only, with what
// failed and when it is retried. A failure that is not the database's (a
// loop step that panicked) is logged at once, in full.
type outage struct {
	log zerolog.Logger
	now func() time.Time

	mu     sync.Mutex
	since  time.Time     // first failure of this outage; zero while the database answers
	noted  time.Time     // when the last line about it was written
	failed int           // calls failed since
	back   chan struct{} // closed when the database answers again; nil while it answers
	down   atomic.Bool   // back != nil, read without the lock on every fire
}

func newOutage(log zerolog.Logger) *outage { return &outage{log: log, now: time.Now} }

// fail reports one failed call of what (a loop, the completer, ...),
// retried after retry.
func (o *outage) fail(what string, err error, retry time.Duration) {
	var p *stepPanic
	if errors.As(err, &p) {
		o.log.Error().Err(err).Str("call", what).Str("retry_in", dur(retry)).Msg("easyjob: loop step panicked")
		return
	}
	o.mu.Lock()
	now := o.now()
	o.failed++
	first := o.since.IsZero()
	remind := !first && now.Sub(o.noted) >= remindEvery
	if first {
		o.since = now
		o.back = make(chan struct{})
		o.down.Store(true)
	}
	if first || remind {
		o.noted = now
	}
	away, failed := now.Sub(o.since), o.failed
	o.mu.Unlock()
	switch {
	case first:
		o.log.Error().Err(err).Str("call", what).
			Msg("easyjob: database not answering; retrying. Fires due meanwhile wait for it; past DeadAfter its claims are dropped for the group to run once")
	case remind:
		o.log.Warn().Err(err).Str("away", dur(away)).Int("failed_calls", failed).Msg("easyjob: database still not answering")
	default:
		o.log.Debug().Err(err).Str("call", what).Str("retry_in", dur(retry)).Msg("easyjob: database call failed")
	}
}

// answered reports a call the database answered: it ends an outage.
func (o *outage) answered() {
	o.mu.Lock()
	if o.since.IsZero() {
		o.mu.Unlock()
		return
	}
	away, failed := o.now().Sub(o.since), o.failed
	o.since, o.failed = time.Time{}, 0
	close(o.back)
	o.back = nil
	o.down.Store(false)
	o.mu.Unlock()
	o.log.Warn().Str("away", dur(away)).Int("failed_calls", failed).Msg("easyjob: database answering again")
}

// ongoing reports that the database has not answered since a call failed.
func (o *outage) ongoing() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.since.IsZero()
}

// awaiting returns a channel closed when the database answers again, or
// nil while it answers.
func (o *outage) awaiting() <-chan struct{} {
	if !o.down.Load() {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.back == nil {
		return nil // a nil channel would block a select forever
	}
	return o.back
}

// dur writes a duration for a log line with its unit, to the millisecond.
func dur(d time.Duration) string { return d.Round(time.Millisecond).String() }
