package repository

import (
	"context"
	"time"
)

// Calendar is a named set of exclusions that tasks of a group share
// (TaskOptions.Calendar): a fire that falls in one is skipped, and
// recorded so with the calendar's name. Dates are read in Timezone
// ("" is UTC).
type Calendar struct {
	Name     string `json:"name"`
	Timezone string `json:"tz,omitempty"`
	// Dates are whole days excluded, YYYY-MM-DD.
	Dates []string `json:"dates,omitempty"`
	// Ranges are spans of whole days excluded, each [from, to] inclusive.
	Ranges []DateRange `json:"ranges,omitempty"`
	// Crons exclude the times they match: "* * * * 0,6" excludes
	// weekends, "* 0-7 * * *" the hours before 8.
	Crons []string `json:"crons,omitempty"`
	// Note says what the calendar is for ("French public holidays").
	Note string `json:"note,omitempty"`
	// UpdatedAt is when it was last written (the store's clock).
	UpdatedAt time.Time `json:"updated_at"`
}

// DateRange is a span of whole days, both ends included (YYYY-MM-DD).
type DateRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// CalendarReader reads the calendars a node applies.
type CalendarReader interface {
	// Calendars lists the calendars of group, by name.
	Calendars(ctx context.Context, group string) ([]Calendar, error)
}

// CalendarStore keeps the exclusion calendars of the groups. Writes
// record the audit entry their context carries (WithAudit), as the
// control operations do.
type CalendarStore interface {
	CalendarReader
	// PutCalendar creates or replaces the calendar c.Name of group.
	PutCalendar(ctx context.Context, group string, c Calendar) (Calendar, error)
	// RemoveCalendar deletes calendar name of group; ErrCalendarNotFound
	// when there is none. Tasks that name it fire as if it were empty.
	RemoveCalendar(ctx context.Context, group, name string) error
}
