package easyjob

import (
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// firePlan is what a worker does with a due fire.
type firePlan struct {
	run     bool
	misfire repository.MisfireAction // "" when the fire is on time
	next    time.Time
	done    bool // the cron has no further fire
}

// planFire applies the misfire policy to a fire scheduled at `scheduled`
// found at database time now. On time, the next fire follows the
// scheduled one (a run that overruns delays, never doubles, the next fire).
func planFire(s schedule, o repository.TaskOptions, scheduled, now time.Time) firePlan {
	p := firePlan{run: true, misfire: misfireFor(&o, scheduled, now)}
	from := scheduled
	if p.misfire != "" {
		switch p.misfire {
		case repository.MisfireSkip:
			p.run = false
			from = now
		case repository.MisfireCatchUp:
			// Run the newest CatchUpMax fires of the outage: this one only
			// when fewer than that many came after it.
			newest := newestFires(s, scheduled, now, max(o.CatchUpMax, 1))
			if len(newest) == max(o.CatchUpMax, 1) {
				p.run = false
			}
			if len(newest) > 0 {
				p.next = newest[len(newest)-1]
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

// newestFires returns up to k fires after scheduled and at or before now,
// newest first. It walks back from now, so a month-long outage costs k
// steps, not one per missed fire.
func newestFires(s schedule, scheduled, now time.Time, k int) []time.Time {
	var out []time.Time
	for t := now; len(out) < k; {
		p, ok := s.prev(t)
		if !ok || !p.After(scheduled) {
			break
		}
		out = append(out, p)
		t = p.Add(-time.Nanosecond)
	}
	return out
}

// misfireFor returns the misfire policy that applies to a fire scheduled
// at `scheduled` and found at now, or "" when the fire is on time. It is
// cheap: the boss calls it for every due fire.
func misfireFor(o *repository.TaskOptions, scheduled, now time.Time) repository.MisfireAction {
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
