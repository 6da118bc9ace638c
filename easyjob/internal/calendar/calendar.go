// Package calendar evaluates the exclusion calendars of a group
// (repository.Calendar): whether a fire time falls on an excluded date, in
// an excluded range of dates, or at a time an excluding cron matches.
// Check validates a calendar before it is written; Compile makes the
// evaluator a node keeps.
package calendar

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/adhocore/gronx"

	"github.com/easyjob-go/easyjob/repository"
)

// ErrInvalid reports a calendar that does not parse (easyjob.ErrInvalidCalendar).
var ErrInvalid = errors.New("easyjob: invalid calendar")

// dateLayout is how dates are written: YYYY-MM-DD.
const dateLayout = time.DateOnly

// Calendar is a compiled repository.Calendar.
type Calendar struct {
	Name  string
	loc   *time.Location
	dates map[string]bool
	spans [][2]string // from, to (YYYY-MM-DD compares as text)
	crons []string
}

// Compile checks c and returns its evaluator; an error wrapping
// ErrInvalid names what is wrong.
func Compile(c repository.Calendar) (*Calendar, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: calendar %q: %s", ErrInvalid, c.Name, fmt.Sprintf(format, a...))
	}
	if strings.TrimSpace(c.Name) == "" || len(c.Name) > 200 {
		return nil, fmt.Errorf("%w: a calendar needs a name of 1 to 200 bytes", ErrInvalid)
	}
	out := &Calendar{Name: c.Name, loc: time.UTC, dates: map[string]bool{}}
	if c.Timezone != "" {
		loc, err := time.LoadLocation(c.Timezone)
		if err != nil {
			return nil, bad("time zone %q: %v", c.Timezone, err)
		}
		out.loc = loc
	}
	for _, d := range c.Dates {
		if _, err := time.Parse(dateLayout, d); err != nil {
			return nil, bad("date %q: want YYYY-MM-DD", d)
		}
		out.dates[d] = true
	}
	for _, r := range c.Ranges {
		from, err1 := time.Parse(dateLayout, r.From)
		to, err2 := time.Parse(dateLayout, r.To)
		if err1 != nil || err2 != nil {
			return nil, bad("range %s..%s: want YYYY-MM-DD..YYYY-MM-DD", r.From, r.To)
		}
		if to.Before(from) {
			return nil, bad("range %s..%s ends before it starts", r.From, r.To)
		}
		out.spans = append(out.spans, [2]string{r.From, r.To})
	}
	for _, expr := range c.Crons {
		if !gronx.New().IsValid(expr) {
			return nil, bad("cron %q does not parse (5 or 6 fields)", expr)
		}
		out.crons = append(out.crons, expr)
	}
	if len(out.dates) == 0 && len(out.spans) == 0 && len(out.crons) == 0 {
		return nil, bad("it excludes nothing: give dates, ranges or crons")
	}
	return out, nil
}

// Excludes reports whether t falls in the calendar, and which rule puts
// it there (for the record of a skipped fire).
func (c *Calendar) Excludes(t time.Time) (bool, string) {
	if c == nil {
		return false, ""
	}
	local := t.In(c.loc)
	day := local.Format(dateLayout)
	if c.dates[day] {
		return true, "date " + day
	}
	for _, s := range c.spans {
		if day >= s[0] && day <= s[1] {
			return true, "range " + s[0] + ".." + s[1]
		}
	}
	for _, expr := range c.crons {
		// A Gronx keeps the reference time it checks: one per call, so
		// that the workers of a node may ask at once.
		if due, err := gronx.New().IsDue(expr, local.Truncate(time.Second)); err == nil && due {
			return true, "cron " + expr
		}
	}
	return false, ""
}

// Set is the compiled calendars of a group, by name. A name with no
// calendar excludes nothing: a task whose calendar was removed fires.
type Set map[string]*Calendar

// NewSet compiles cs; a calendar that does not compile (written by
// another version) is left out and its error reported by name.
func NewSet(cs []repository.Calendar) (Set, map[string]error) {
	set, errs := Set{}, map[string]error{}
	for _, c := range cs {
		cc, err := Compile(c)
		if err != nil {
			errs[c.Name] = err
			continue
		}
		set[c.Name] = cc
	}
	return set, errs
}

// Excludes reports whether calendar name excludes t.
func (s Set) Excludes(name string, t time.Time) (bool, string) {
	if name == "" {
		return false, ""
	}
	return s[name].Excludes(t)
}
