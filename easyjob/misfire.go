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

// planFire applies the misfire policy to a fire scheduled at `scheduled`
// found at database time now. On time, the next fire follows the
// scheduled one (a run that overruns delays, never doubles, the next fire).
func planFire(s schedule, o repository.TaskOptions, scheduled, now time.Time) firePlan {
	p := firePlan{run: true, misfire: misfireFor(o, scheduled, now)}
	from := scheduled
	if p.misfire != "" {
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
	if ok && p.misfire != "" && sameWallClock(next, scheduled, s.loc) {
		// Falling back, a wall-clock time occurs twice: a late fire of the
		// first must not schedule the second.
		next, ok = s.next(next)
	}
	p.next, p.done = next, !ok
	return p
}

// sameWallClock reports whether a and b read the same date and time in loc.
func sameWallClock(a, b time.Time, loc *time.Location) bool {
	a, b = a.In(loc), b.In(loc)
	return a.Year() == b.Year() && a.YearDay() == b.YearDay() && a.Hour() == b.Hour() &&
		a.Minute() == b.Minute() && a.Second() == b.Second()
}

// catchUpNext returns the next missed fire to run: of the fires after
// scheduled and up to now, only the newest max-1 run after the current one
// (which counts as one). It walks back from now, so a month-long outage
// costs max-1 steps, not one per missed fire.
func catchUpNext(s schedule, scheduled, now time.Time, maxFires int) (time.Time, bool) {
	keep := max(maxFires-1, 0)
	oldest, found := time.Time{}, false
	for t := now; keep > 0; keep-- {
		p, ok := s.prev(t)
		if !ok || !p.After(scheduled) {
			break
		}
		oldest, found = p, true
		t = p.Add(-time.Nanosecond)
	}
	return oldest, found
}

// misfireFor returns the misfire policy that applies to a fire scheduled
// at `scheduled` and found at now, or "" when the fire is on time. It is
// cheap: the boss calls it for every due fire.
func misfireFor(o repository.TaskOptions, scheduled, now time.Time) repository.MisfirePolicy {
	threshold := o.MisfireThreshold
	if threshold <= 0 {
		threshold = defaultMisfireThreshold
	}
	if now.Sub(scheduled) <= threshold {
		return ""
	}
	if o.Misfire == "" {
		return repository.MisfireFireOnceNow
	}
	return o.Misfire
}
