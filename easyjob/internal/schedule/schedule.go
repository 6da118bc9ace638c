package schedule

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/adhocore/gronx"

	"github.com/easyjob-go/easyjob/repository"
)

// Schedule is a parsed cron expression bound to a time zone. Expressions
// have 5 fields (minute precision), 6 (leading seconds) or 7 (trailing
// year); "?" is accepted as "*"; the macros @yearly, @annually, @monthly,
// @weekly, @daily, @hourly, @30minutes, @15minutes, @10minutes, @5minutes,
// @always (every minute), @everysecond and @midnight (as @daily) stand for their cron
// expressions. "@every <duration>" is an interval (see every).
// An empty expression has no fire times of its own (a child that runs
// after every parent success).
type Schedule struct {
	expr string
	loc  *time.Location
	// every is the period of an "@every <duration>" schedule, 0 for a cron.
	// Its fires lie on a fixed grid: the multiples of every since the Unix
	// epoch (1970-01-01 00:00:00 UTC). Every node computes the same grid
	// with no stored anchor, so a restart, a failover, a trigger or a
	// misfire never shifts it: a fire scheduled at s is followed by s +
	// every, and a fire found late is followed by the next grid point. The
	// time zone does not matter. "@every 5m" fires at :00, :05, ... like
	// "*/5 * * * *"; "@every 7m" at the multiples of 420 s since the epoch.
	every time.Duration
	// anchor is the origin of the @every grid when it is not the epoch
	// (AnchoredAt: a task's creation), whole seconds; zero for the epoch.
	anchor time.Time
	// at is the one fire of an "@at <time>" schedule (at.go); zero for
	// any other.
	at time.Time
	// start and end bound the fires (Window): none before start or after
	// end; zero for no bound.
	start, end time.Time
	// shift moves every fire later (Spread): a fire is the expression's
	// time + shift; 0 for none.
	shift time.Duration
	memo  *tickMemo // shared by the specs of one node with this expr and loc; may be nil
	// simple is the expression as a simpleCron (simple.go) when it is one
	// and the zone is UTC (isSimple): its fires are computed, not searched.
	simple   simpleCron
	isSimple bool
	// afterParents marks a DAG step's schedule (after.go).
	afterParents bool
}

// ErrInvalidCron reports an expression or time zone that does not parse,
// or a cron that never fires (easyjob.ErrInvalidCron).
var ErrInvalidCron = errors.New("easyjob: invalid cron expression")

// DefaultMisfireThreshold is how late a fire may be found before its
// misfire policy applies, when the task sets none.
const DefaultMisfireThreshold = 5 * time.Second

// Expr is the expression as parsed (without a CRON_TZ prefix).
func (s Schedule) Expr() string { return s.expr }

// Location is the time zone the expression is read in.
func (s Schedule) Location() *time.Location { return s.loc }

// Parse reads a cron expression (or "@every <duration>", or "@at <time>")
// in time zone tz
// ("" is UTC; a CRON_TZ= or TZ= prefix wins). An empty expression is a schedule
// with no fires of its own. Errors wrap ErrInvalidCron.
func Parse(expr, tz string) (Schedule, error) {
	expr = strings.TrimSpace(expr)
	for _, prefix := range tzPrefixes {
		if rest, ok := strings.CutPrefix(expr, prefix); ok {
			zone, e, ok := strings.Cut(rest, " ")
			if !ok {
				return Schedule{}, fmt.Errorf("%w: %q has %s but no fields", ErrInvalidCron, expr, strings.TrimSuffix(prefix, "="))
			}
			tz, expr = zone, strings.TrimSpace(e)
			break
		}
	}
	if a, ok := aliases[strings.ToLower(expr)]; ok {
		expr = a
	}
	loc := time.UTC
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return Schedule{}, fmt.Errorf("%w: time zone %q: %w", ErrInvalidCron, tz, err)
		}
		loc = l
	}
	if expr == "" {
		return Schedule{loc: loc}, nil
	}
	if every, ok, err := parseEvery(expr); ok || err != nil {
		return Schedule{expr: expr, loc: loc, every: every}, err
	}
	if at, ok, err := parseAt(expr, loc); ok || err != nil {
		return Schedule{expr: expr, loc: loc, at: at}, err
	}
	if c, ok := parseSimple(expr); ok && loc == time.UTC {
		return Schedule{expr: expr, loc: loc, simple: c, isSimple: true}, nil // fires every day
	}
	if !gronx.IsValid(expr) {
		return Schedule{}, invalidField(expr)
	}
	// A valid expression can still never fire (Feb 30): find out now.
	s := Schedule{expr: expr, loc: loc}
	if _, ok := s.Next(time.Now()); !ok {
		return Schedule{}, fmt.Errorf("%w: %q never fires", ErrInvalidCron, expr)
	}
	return s, nil
}

// everyPrefix introduces an interval schedule: "@every 90s".
const everyPrefix = "@every"

// parseEvery parses "@every <duration>" (time.ParseDuration syntax, whole
// seconds, at least one). ok is false for any other expression.
func parseEvery(expr string) (d time.Duration, ok bool, err error) {
	f := strings.Fields(expr)
	if len(f) == 0 || !strings.EqualFold(f[0], everyPrefix) {
		return 0, false, nil
	}
	if len(f) != 2 {
		return 0, true, fmt.Errorf("%w: %q: want @every <duration>, e.g. @every 90s", ErrInvalidCron, expr)
	}
	d, err = time.ParseDuration(f[1])
	if err != nil {
		return 0, true, fmt.Errorf("%w: %q: %w", ErrInvalidCron, expr, err)
	}
	if d < time.Second || d%time.Second != 0 {
		return 0, true, fmt.Errorf("%w: %q: the interval must be whole seconds, at least 1s", ErrInvalidCron, expr)
	}
	return d, true, nil
}

// Empty reports a schedule with no fire times of its own.
func (s Schedule) Empty() bool { return s.expr == "" }

// gridFloorFrom returns the last point at or before t of the grid of
// step d that starts at origin (zero: the Unix epoch).
func gridFloorFrom(origin, t time.Time, d time.Duration) time.Time {
	var o int64
	if !origin.IsZero() {
		o = origin.UnixNano()
	}
	n := t.UnixNano() - o
	k := n / int64(d)
	if n%int64(d) < 0 {
		k-- // floor, not truncation, before the origin
	}
	return time.Unix(0, o+k*int64(d)).UTC()
}

// AnchoredAt returns s with its @every grid starting at t, to the second,
// instead of the epoch: fires at t + k*interval. A cron is returned as is.
func (s Schedule) AnchoredAt(t time.Time) Schedule {
	if s.every > 0 && !t.IsZero() {
		s.anchor = t.Truncate(time.Second)
	}
	return s
}

// Window returns s with its fires bounded: none before start or after
// end (zero: no bound). Past end the schedule has no further fire, so a
// task finishes after its last run.
func (s Schedule) Window(start, end time.Time) Schedule {
	s.start, s.end = start, end
	return s
}

// ForTask returns s as task name with options o, created at created,
// fires it: anchored at its creation (EveryFromCreation), moved by its
// spread offset (Spread) and within its window.
func (s Schedule) ForTask(name string, o repository.TaskOptions, created time.Time) Schedule {
	if o.EveryFromCreation {
		s = s.AnchoredAt(created)
	}
	return s.Spread(name, o.Spread).Window(o.Start, o.End)
}

// Next returns the first fire strictly after t, or false when there is none.
func (s Schedule) Next(t time.Time) (time.Time, bool) {
	if s.afterParents {
		return awaitParents()
	}
	if !s.start.IsZero() && t.Before(s.start) {
		t = s.start.Add(-time.Nanosecond) // the first fire at or after start
	}
	n, ok := s.next(t.Add(-s.shift))
	if !ok {
		return time.Time{}, false
	}
	if n = n.Add(s.shift); !s.end.IsZero() && n.After(s.end) {
		return time.Time{}, false
	}
	return n, true
}

// Fires returns the first n fires strictly after t, fewer when the
// schedule runs out.
func (s Schedule) Fires(t time.Time, n int) []time.Time {
	var out []time.Time
	for len(out) < n {
		next, ok := s.Next(t)
		if !ok {
			break
		}
		out, t = append(out, next), next
	}
	return out
}

// next is Next without the window.
func (s Schedule) next(t time.Time) (time.Time, bool) {
	if s.Empty() {
		return time.Time{}, false
	}
	if s.every > 0 {
		return gridFloorFrom(s.anchor, t, s.every).Add(s.every), true
	}
	if !s.at.IsZero() {
		if s.at.After(t) {
			return s.at, true
		}
		return time.Time{}, false
	}
	if s.isSimple {
		return s.simple.next(t), true
	}
	// gronx works at second precision in the reference time's zone.
	ref := t.In(s.loc).Truncate(time.Second)
	n, err := s.memo.tick(s.expr, ref)
	if err != nil || !n.After(t) {
		if err == nil {
			n, err = gronx.NextTickAfter(s.expr, ref.Add(time.Second), true)
		}
		if err != nil || !n.After(t) {
			return s.nextOnWallClock(t)
		}
	}
	n = firstOfRepeated(n, t)
	return n.UTC(), true
}

// firstOfRepeated returns the first instant with n's wall clock after t.
// Where clocks are set back, a wall time occurs twice; gronx, searching
// from a little before the change, can answer the second. A fire is at
// the first (TestScheduleDSTFallBack).
func firstOfRepeated(n, t time.Time) time.Time {
	if e := firstInstant(n); e.After(t) {
		return e
	}
	return n
}

// maxSetBack bounds how far back firstOfRepeated looks for a set-back.
const maxSetBack = 3 * time.Hour

// nextOnWallClock is Next where gronx gives up: its search in the zone
// fails when it crosses a day that has no midnight (clocks that spring
// forward at 00:00, as in America/Santiago or America/Havana), although
// the expression fires. It searches the wall clock instead, read as UTC
// (which has no gaps), and places each wall time found back in the zone;
// one that falls in a gap does not exist there and is skipped, as gronx
// skips it elsewhere.
func (s Schedule) nextOnWallClock(t time.Time) (time.Time, bool) {
	wall := wallClock(t.In(s.loc).Truncate(time.Second))
	for range maxGapSkips {
		w, err := gronx.NextTickAfter(s.expr, wall, false)
		if err != nil || !w.After(wall) {
			return time.Time{}, false // no further fire (a year past the last)
		}
		at := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, s.loc)
		if wallClock(at).Equal(w) && at.After(t) {
			return at.UTC(), true
		}
		wall = w
	}
	return time.Time{}, false
}

// maxGapSkips bounds the wall times nextOnWallClock tries: each one it
// skips lies in a gap, and a gap lasts at most a day.
const maxGapSkips = 2 * 24 * 60 * 60

// wallClock is t's wall clock read as a UTC time.
func wallClock(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

// tickMemo remembers the last tick computed for one expression and zone.
// Tasks that share a cron fire together and ask for the same tick, and
// gronx parses the expression on every call: one computation serves them
// all. A nil memo computes every time.
type tickMemo struct {
	mu   sync.Mutex
	ref  time.Time
	next time.Time
	err  error
}

// tick is gronx.NextTickAfter(expr, ref, false), remembered for ref.
func (m *tickMemo) tick(expr string, ref time.Time) (time.Time, error) {
	if m == nil {
		return gronx.NextTickAfter(expr, ref, false)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ref.Equal(ref) || m.ref.Location() != ref.Location() {
		m.next, m.err = gronx.NextTickAfter(expr, ref, false)
		m.ref = ref
	}
	return m.next, m.err
}

// ShareTicks gives the schedules that share an expression and
// zone one tickMemo.
func ShareTicks(scheds []*Schedule) {
	memos := map[string]*tickMemo{}
	for _, s := range scheds {
		if s.Empty() || s.every > 0 || !s.at.IsZero() {
			continue
		}
		key := s.expr + "\x00" + s.loc.String()
		if memos[key] == nil {
			memos[key] = &tickMemo{}
		}
		s.memo = memos[key]
	}
}

// Prev returns the last fire at or before t, or false when there is none.
func (s Schedule) Prev(t time.Time) (time.Time, bool) {
	if !s.end.IsZero() && t.After(s.end) {
		t = s.end
	}
	p, ok := s.prev(t.Add(-s.shift))
	if !ok {
		return time.Time{}, false
	}
	if p = p.Add(s.shift); !s.start.IsZero() && p.Before(s.start) {
		return time.Time{}, false
	}
	return p, true
}

// prev is Prev without the window.
func (s Schedule) prev(t time.Time) (time.Time, bool) {
	if s.Empty() {
		return time.Time{}, false
	}
	if s.every > 0 {
		return gridFloorFrom(s.anchor, t, s.every), true
	}
	if !s.at.IsZero() {
		if s.at.After(t) {
			return time.Time{}, false
		}
		return s.at, true
	}
	if s.isSimple {
		return s.simple.prev(t), true
	}
	p, err := gronx.PrevTickBefore(s.expr, t.In(s.loc).Truncate(time.Second), true)
	if err != nil || p.After(t) {
		// Around a set-back gronx can answer the repeated wall time's
		// second instant, after t: the wall clock decides instead.
		return s.prevOnWallClock(t)
	}
	return firstInstant(p).UTC(), true
}

// firstInstant returns the first instant with p's wall clock: where
// clocks are set back a wall time occurs twice, and a fire is at the
// first (firstOfRepeated), so the last fire at or before a time after
// the second instant is the first.
func firstInstant(p time.Time) time.Time {
	_, after := p.Zone()
	_, before := p.Add(-maxSetBack).Zone()
	if before <= after {
		return p
	}
	if e := p.Add(-time.Duration(before-after) * time.Second); wallClock(e).Equal(wallClock(p)) {
		return e
	}
	return p
}

// prevOnWallClock is Prev where gronx gives up (see nextOnWallClock).
func (s Schedule) prevOnWallClock(t time.Time) (time.Time, bool) {
	wall := wallClock(t.In(s.loc).Truncate(time.Second))
	incl := true
	for range maxGapSkips {
		w, err := gronx.PrevTickBefore(s.expr, wall, incl)
		if err != nil || w.After(wall) || (!incl && w.Equal(wall)) {
			return time.Time{}, false
		}
		at := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, s.loc)
		if wallClock(at).Equal(w) {
			if at = firstInstant(at); !at.After(t) {
				return at.UTC(), true
			}
		}
		wall, incl = w, false
	}
	return time.Time{}, false
}

// The misfire plan: what a fire found late does.

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
	if ok && p.Misfire != "" && sameWallClock(next.Add(-s.shift), scheduled.Add(-s.shift), s.loc) {
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
