package dispatch

import "time"

// wakeEarly is how long before a fire the boss's timer goes off. Go's
// timers can be a millisecond late when the process is idle (the
// netpoller sleeps whole milliseconds), and a fire should start on its
// instant, so the boss sleeps the last stretch with SleepUntil instead.
// Fires are whole database seconds, so this costs at most one short
// precise sleep per second.
const wakeEarly = 2 * time.Millisecond

// Wait is how long the boss's timer waits for a fire at local time
// next (zero: none queued); precise reports that next is within
// wakeEarly, so the boss sleeps until it with SleepUntil instead.
func Wait(next time.Time) (wait time.Duration, precise bool) {
	if next.IsZero() {
		return time.Hour, false
	}
	wait = time.Until(next)
	if wait <= wakeEarly {
		return wait, true
	}
	return wait - wakeEarly, false
}
