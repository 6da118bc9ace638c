package easyjob

import (
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// firePlan is what a worker does with a due fire.
type firePlan struct {
	run     bool
	misfire repository.MisfirePolicy // "" when the fire is on time
	next    time.Time
	done    bool // the cron has no further fire
}

// maxCatchUpScan bounds the walk over missed fires (an every-second cron
// that missed a month).
const maxCatchUpScan = 100000

// planFire applies the misfire policy to a fire scheduled at `scheduled`
// found at database time now. On time, the next fire follows the
// scheduled one (a run that overruns delays, never doubles, the next fire).
func planFire(s schedule, o repository.TaskOptions, scheduled, now time.Time) firePlan {
	p := firePlan{run: true}
	threshold := o.MisfireThreshold
	if threshold <= 0 {
		threshold = defaultMisfireThreshold
	}
	from := scheduled
	if now.Sub(scheduled) > threshold {
		p.misfire = o.Misfire
		if p.misfire == "" {
			p.misfire = repository.MisfireFireOnceNow
		}
		switch p.misfire {
		case repository.MisfireSkip:
			p.run = false
			from = now
		case repository.MisfireCatchUp:
			if next, ok := catchUpNext(s, scheduled, now, o.CatchUpMax); ok {
				p.next = next
				return p
			}
			from = now
		default:
			from = now
		}
	}
	next, ok := s.next(from)
	p.next, p.done = next, !ok
	return p
}

// catchUpNext returns the next missed fire to run, keeping only the newest
// max-1 missed fires after the current one (the current run counts as one).
func catchUpNext(s schedule, scheduled, now time.Time, maxFires int) (time.Time, bool) {
	keep := max(maxFires-1, 0)
	if keep == 0 {
		return time.Time{}, false
	}
	var missed []time.Time
	t := scheduled
	for i := 0; i < maxCatchUpScan; i++ {
		n, ok := s.next(t)
		if !ok || n.After(now) {
			break
		}
		missed = append(missed, n)
		t = n
	}
	if len(missed) == 0 {
		return time.Time{}, false
	}
	if len(missed) > keep {
		missed = missed[len(missed)-keep:]
	}
	return missed[0], true
}
