package schedule

import (
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Plan is what a worker does with a due fire.
type Plan struct {
	Run     bool
	Misfire repository.MisfireAction // "" when the fire is on time
	Next    time.Time
	Done    bool // the cron has no further fire
}

// PlanFire applies the misfire policy to a fire scheduled at `scheduled`
// found at database time now. On time, the next fire follows the
// scheduled one (a run that overruns delays, never doubles, the next fire).
func PlanFire(s Schedule, o repository.TaskOptions, scheduled, now time.Time) Plan {
	p := Plan{Run: true, Misfire: MisfireFor(&o, scheduled, now)}
	from := scheduled
	if p.Misfire != "" {
		switch p.Misfire {
		case repository.MisfireSkip:
			p.Run = false
			from = now
		case repository.MisfireCatchUp:
			// Run the newest CatchUpMax fires of the outage: this one only
			// when fewer than that many came after it.
			newest := newestFires(s, scheduled, now, max(o.CatchUpMax, 1))
			if len(newest) == max(o.CatchUpMax, 1) {
				p.Run = false
			}
			if len(newest) > 0 {
				p.Next = newest[len(newest)-1]
				return p
			}
			from = now
		default:
			from = now
		}
	}
	next, ok := s.Next(from)
	if ok && p.Misfire != "" && sameWallClock(next, scheduled, s.loc) {
		// Falling back, a wall-clock time occurs twice: a late fire of the
		// first must not schedule the second.
		next, ok = s.Next(next)
	}
	p.Next, p.Done = next, !ok
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
func newestFires(s Schedule, scheduled, now time.Time, k int) []time.Time {
	var out []time.Time
	for t := now; len(out) < k; {
		p, ok := s.Prev(t)
		if !ok || !p.After(scheduled) {
			break
		}
		out = append(out, p)
		t = p.Add(-time.Nanosecond)
	}
	return out
}

// MisfireFor returns the misfire policy that applies to a fire scheduled
// at `scheduled` and found at now, or "" when the fire is on time. It is
// cheap: the boss calls it for every due fire.
func MisfireFor(o *repository.TaskOptions, scheduled, now time.Time) repository.MisfireAction {
	threshold := o.MisfireThreshold
	if threshold <= 0 {
		threshold = DefaultMisfireThreshold
	}
	if now.Sub(scheduled) <= threshold {
		return ""
	}
	if o.Misfire == "" {
		return repository.MisfireFireOnceNow
	}
	return o.Misfire
}
