package easyjob

import (
	"context"
	"fmt"
	"strings"

	"github.com/easyjob-go/easyjob/easyjob/internal/calendar"
	"github.com/easyjob-go/easyjob/repository"
)

// ExclusionCalendar is a named set of exclusions the tasks of a group
// share (the Calendar option): whole dates, ranges of dates and crons
// (e.g. "* * * * 0,6", weekends), read in its time zone. A fire that
// falls in one is skipped and recorded so, with the calendar's name.
type ExclusionCalendar = repository.Calendar

// DateRange is a span of whole days of an ExclusionCalendar, both ends
// included (YYYY-MM-DD).
type DateRange = repository.DateRange

// SetCalendar creates or replaces the group's calendar c.Name, checked
// first (ErrInvalidCalendar naming the rule at fault; nothing written).
// Every node applies it within a few seconds (calendarRefresh), without
// a restart. The change is audited (action "calendar").
func (c *Client) SetCalendar(ctx context.Context, cal ExclusionCalendar) (ExclusionCalendar, error) {
	if _, err := calendar.Compile(cal); err != nil {
		return ExclusionCalendar{}, err
	}
	detail := fmt.Sprintf("set %s: %s", cal.Name, calendarSummary(cal))
	out, err := c.store.PutCalendar(c.audited(ctx, "calendar", "", detail), c.group, cal)
	if err != nil {
		return ExclusionCalendar{}, fmt.Errorf("easyjob: set calendar %q of group %q: %w", cal.Name, c.group, err)
	}
	return out, nil
}

// Calendars lists the group's calendars by name.
func (c *Client) Calendars(ctx context.Context) ([]ExclusionCalendar, error) {
	cs, err := c.store.Calendars(ctx, c.group)
	if err != nil {
		return nil, fmt.Errorf("easyjob: calendars of group %q: %w", c.group, err)
	}
	return cs, nil
}

// RemoveCalendar deletes the group's calendar name (ErrCalendarNotFound
// when there is none); the tasks that name it fire on every date again.
// The removal is audited.
func (c *Client) RemoveCalendar(ctx context.Context, name string) error {
	if err := c.store.RemoveCalendar(c.audited(ctx, "calendar", "", "remove "+name), c.group, name); err != nil {
		return fmt.Errorf("easyjob: remove calendar %q of group %q: %w", name, c.group, err)
	}
	return nil
}

// calendarSummary says what a calendar excludes, for the audit log.
func calendarSummary(cal ExclusionCalendar) string {
	var parts []string
	if n := len(cal.Dates); n > 0 {
		parts = append(parts, fmt.Sprintf("%d date(s)", n))
	}
	if n := len(cal.Ranges); n > 0 {
		parts = append(parts, fmt.Sprintf("%d range(s)", n))
	}
	for _, x := range cal.Crons {
		parts = append(parts, "cron "+x)
	}
	if cal.Timezone != "" {
		parts = append(parts, "in "+cal.Timezone)
	}
	return strings.Join(parts, ", ")
}
