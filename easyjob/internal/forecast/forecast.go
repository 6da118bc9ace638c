// Package forecast counts the fires a group's schedules will have, second
// by second, over a horizon (the next 24 h by default): where the load of
// "0 * * * *" storms falls, so an operator sees them before the database
// does, and sees Spread flatten them. It is pure: it reads no clock and no
// store, only the tasks and the times it is given.
//
// A million schedules are mostly a few crons: the tasks that share a
// cron, a zone, a window and a spread or jitter window form one group,
// whose cron's fires are computed once; a task then costs a hash (its
// spread offset) and, with jitter, one hash per fire.
package forecast

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/calendar"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// MaxHorizon bounds a forecast: a count per second of a week is 2.4 MB.
const MaxHorizon = 7 * 24 * time.Hour

// ErrHorizon reports a horizon that is not above 0 and at most MaxHorizon.
var ErrHorizon = errors.New("forecast horizon must be above 0 and at most 7 days")

// Forecaster counts the fires of the tasks added to it in [from, from +
// horizon). Add the tasks (in pages: it keeps counts, not tasks), then
// read Result. Not safe for concurrent use.
type Forecaster struct {
	from    time.Time
	horizon time.Duration
	counts  []int32 // fires per second from from
	groups  map[groupKey]*group
	parse   *schedule.Cache
	tasks   int // counted
	skipped int // their cron does not parse here
	cals    calendar.Set
}

// groupKey is what the tasks of one group share: their fires differ only
// by their spread offset (and, with jitter, each fire's delay).
type groupKey struct {
	cron, tz      string
	anchor        time.Time // EveryFromCreation's, zero for the epoch
	start, end    time.Time
	spread, delay time.Duration // Spread and Jitter windows
	calendar      string        // the exclusion calendar, "" for none
}

// group is one groupKey's cron fires over the horizon widened by its
// spread and jitter windows (a fire moved into the horizon counts), and
// the tasks without jitter by spread offset, expanded in Result.
type group struct {
	fires      []time.Time // the cron's own fires, unmoved, unbounded by the window
	sched      schedule.Schedule
	start, end time.Time // the window, applied to the moved fires
	calendar   string    // the exclusion calendar whose dates the fires skip
	// offsets counts the tasks without jitter by spread offset. When
	// every fire is on a whole second (a cron's, an @every's) and so is
	// the window, an offset is kept as its whole seconds + 1 ns for any
	// fraction: the same second and the same side of each bound, and a
	// million tasks fold into window/1s entries.
	offsets map[time.Duration]int32
	whole   bool
}

// New returns a Forecaster of [from, from+horizon), from truncated to the
// second and horizon rounded up to one. An error wraps ErrHorizon.
func New(from time.Time, horizon time.Duration) (*Forecaster, error) {
	if horizon <= 0 || horizon > MaxHorizon {
		return nil, fmt.Errorf("%w (got %v)", ErrHorizon, horizon)
	}
	secs := int64((horizon + time.Second - 1) / time.Second)
	return &Forecaster{
		from: from.UTC().Truncate(time.Second), horizon: time.Duration(secs) * time.Second,
		counts: make([]int32, secs), groups: map[groupKey]*group{}, parse: schedule.NewCache(4096),
	}, nil
}

// Counts reports whether t fires on its own cron: a root task (a chain
// step runs after its parent, whose fires are counted) with a cron,
// neither paused nor finished.
func Counts(t *repository.Task) bool {
	return t.ParentID == 0 && t.Cron != "" && !t.Paused &&
		t.Status != repository.TaskPaused && t.Status != repository.TaskFinished
}

// Add counts the fires of t in the horizon; a task Counts refuses adds
// none, one whose cron does not parse here (a zone this host lacks) is
// counted in Skipped.
func (f *Forecaster) Add(t *repository.Task) {
	if !Counts(t) {
		return
	}
	o := t.Options
	s, err := f.parse.Parse(t.Cron, o.Timezone) // remembered: a map lookup for all but the first
	if err != nil || s.Empty() {
		f.skipped++
		return
	}
	k := groupKey{cron: t.Cron, tz: o.Timezone, start: o.Start, end: o.End, spread: o.Spread, delay: o.Jitter, calendar: o.Calendar}
	if a := s.AnchoredAt(t.CreatedAt); o.EveryFromCreation && a != s {
		// An @every grid anchored at the task's creation: its own group
		// (tasks created in the same second share it).
		s, k.anchor = a, t.CreatedAt.Truncate(time.Second)
	}
	g, ok := f.groups[k]
	if !ok {
		g = f.newGroup(s, k)
		f.groups[k] = g
	}
	f.tasks++
	off := schedule.SpreadOf(t.Name, o.Spread)
	if _, once := g.sched.OneOff(); once {
		off = 0
	}
	if o.Jitter <= 0 {
		if g.whole && off%time.Second != 0 {
			off = off.Truncate(time.Second) + time.Nanosecond
		}
		g.offsets[off]++
		return
	}
	for _, at := range g.fires {
		at = at.Add(off)
		if g.outside(at) || f.excluded(g, at) {
			continue
		}
		f.count(at.Add(schedule.JitterOf(t.Name, at, o.Jitter)), 1)
	}
}

// newGroup computes the fires of s that may land in the horizon once
// moved by up to k's spread and delayed by up to its jitter.
func (f *Forecaster) newGroup(s schedule.Schedule, k groupKey) *group {
	g := &group{sched: s, start: k.start, end: k.end, calendar: k.calendar, offsets: map[time.Duration]int32{}}
	g.whole = k.start.Equal(k.start.Truncate(time.Second)) && k.end.Equal(k.end.Truncate(time.Second))
	to := f.from.Add(f.horizon)
	t := f.from.Add(-k.spread - k.delay - time.Nanosecond)
	for {
		n, ok := s.Next(t)
		if !ok || !n.Before(to) {
			break
		}
		g.fires = append(g.fires, n)
		g.whole = g.whole && n.Equal(n.Truncate(time.Second))
		t = n
	}
	return g
}

// outside reports a moved fire at that the group's window excludes.
func (g *group) outside(at time.Time) bool {
	return (!g.start.IsZero() && at.Before(g.start)) || (!g.end.IsZero() && at.After(g.end))
}

// Calendars sets the group's exclusion calendars: a fire a task's
// calendar excludes is skipped, as the nodes skip it, and not counted.
func (f *Forecaster) Calendars(s calendar.Set) { f.cals = s }

// excluded reports a fire at (moved, before jitter: the time the nodes
// judge) that g's calendar excludes.
func (f *Forecaster) excluded(g *group, at time.Time) bool {
	if g.calendar == "" {
		return false
	}
	ex, _ := f.cals.Excludes(g.calendar, at)
	return ex
}

// count adds n fires at at when it lies in the horizon.
func (f *Forecaster) count(at time.Time, n int32) {
	d := at.Sub(f.from)
	if d < 0 || d >= f.horizon {
		return
	}
	f.counts[d/time.Second] += n
}

// Second is one second and the fires in it.
type Second struct {
	At    time.Time
	Fires int
}

// Result is a forecast: the fires of the tasks added, per second.
type Result struct {
	From    time.Time
	Horizon time.Duration
	// Tasks counts the tasks whose fires are counted; Skipped those whose
	// cron does not parse here.
	Tasks, Skipped int
	// Total is the fires in the horizon.
	Total int64
	// Seconds are the seconds with at least one fire, in time order.
	Seconds []Second
}

// Result expands the groups' spread offsets and returns the forecast.
// The Forecaster is spent.
func (f *Forecaster) Result() Result {
	for _, g := range f.groups {
		for off, n := range g.offsets {
			for _, at := range g.fires {
				if at = at.Add(off); !g.outside(at) && !f.excluded(g, at) {
					f.count(at, n)
				}
			}
		}
		g.offsets = nil
	}
	r := Result{From: f.from, Horizon: f.horizon, Tasks: f.tasks, Skipped: f.skipped}
	for i, n := range f.counts {
		if n > 0 {
			r.Total += int64(n)
			r.Seconds = append(r.Seconds, Second{At: f.from.Add(time.Duration(i) * time.Second), Fires: int(n)})
		}
	}
	return r
}

// Peaks returns the n busiest seconds of r, busiest first (the earlier
// of equals first).
func (r Result) Peaks(n int) []Second {
	s := slices.Clone(r.Seconds)
	slices.SortStableFunc(s, func(a, b Second) int { return b.Fires - a.Fires })
	return s[:min(n, len(s))]
}

// Buckets returns the fires per width from r.From, over the horizon (the
// last bucket may be shorter). width must be at least a second.
func (r Result) Buckets(width time.Duration) []int {
	width = max(width, time.Second)
	out := make([]int, (r.Horizon+width-1)/width)
	for _, s := range r.Seconds {
		out[s.At.Sub(r.From)/width] += s.Fires
	}
	return out
}
