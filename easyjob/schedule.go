package easyjob

import (
	"fmt"
	"strings"
	"time"

	"github.com/adhocore/gronx"

	"github.com/easyjob-go/easyjob/repository"
)

// schedule is a parsed cron expression bound to a time zone. Expressions
// have 5 fields (minute precision), 6 (leading seconds) or 7 (trailing
// year); "?" is accepted as "*". An empty expression has no fire times of
// its own (a child that runs after every parent success).
type schedule struct {
	expr string
	loc  *time.Location
}

const cronTZPrefix = "CRON_TZ="

func parseSchedule(expr, tz string) (schedule, error) {
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, cronTZPrefix) {
		rest := strings.TrimPrefix(expr, cronTZPrefix)
		zone, e, ok := strings.Cut(rest, " ")
		if !ok {
			return schedule{}, fmt.Errorf("%w: %q has CRON_TZ but no fields", ErrInvalidCron, expr)
		}
		tz, expr = zone, strings.TrimSpace(e)
	}
	loc := time.UTC
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return schedule{}, fmt.Errorf("%w: time zone %q: %w", ErrInvalidCron, tz, err)
		}
		loc = l
	}
	if expr == "" {
		return schedule{loc: loc}, nil
	}
	if !gronx.IsValid(expr) {
		return schedule{}, fmt.Errorf("%w: %q", ErrInvalidCron, expr)
	}
	// A valid expression can still never fire (Feb 30): find out now.
	s := schedule{expr: expr, loc: loc}
	if _, ok := s.next(time.Now()); !ok {
		return schedule{}, fmt.Errorf("%w: %q never fires", ErrInvalidCron, expr)
	}
	return s, nil
}

// empty reports a schedule with no fire times of its own.
func (s schedule) empty() bool { return s.expr == "" }

// next returns the first fire strictly after t, or false when there is none.
func (s schedule) next(t time.Time) (time.Time, bool) {
	if s.empty() {
		return time.Time{}, false
	}
	// gronx works at second precision in the reference time's zone.
	ref := t.In(s.loc).Truncate(time.Second)
	n, err := gronx.NextTickAfter(s.expr, ref, false)
	if err != nil || !n.After(t) {
		if err == nil {
			n, err = gronx.NextTickAfter(s.expr, ref.Add(time.Second), true)
		}
		if err != nil || !n.After(t) {
			return time.Time{}, false
		}
	}
	return n.UTC(), true
}

// prev returns the last fire at or before t, or false when there is none.
func (s schedule) prev(t time.Time) (time.Time, bool) {
	if s.empty() {
		return time.Time{}, false
	}
	p, err := gronx.PrevTickBefore(s.expr, t.In(s.loc).Truncate(time.Second), true)
	if err != nil || p.After(t) {
		return time.Time{}, false
	}
	return p.UTC(), true
}

// scheduleFor returns the schedule of the row's cron: the registered one,
// or the row's own when an operator rescheduled the task.
func (n *node) scheduleFor(t repository.Task, spec *taskSpec) schedule {
	if t.Cron == spec.cron {
		return spec.sched
	}
	s, err := parseSchedule(t.Cron, spec.opts.Timezone)
	if err != nil {
		n.log.Error().Err(err).Str("task", t.Name).Msg("easyjob: stored cron is invalid; using the registered one")
		return spec.sched
	}
	return s
}
