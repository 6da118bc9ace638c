package schedule

import (
	"fmt"
	"strings"
	"time"
)

// atPrefix introduces a one-off schedule: "@at 2026-11-26T10:00:00Z"
// fires once, at that instant, and never again. Without a zone offset
// ("@at 2026-11-26T10:00:00") the time is read in the schedule's zone.
const atPrefix = "@at"

// parseAt parses "@at <time>" in loc. ok is false for any other
// expression.
func parseAt(expr string, loc *time.Location) (at time.Time, ok bool, err error) {
	f := strings.Fields(expr)
	if len(f) == 0 || !strings.EqualFold(f[0], atPrefix) {
		return time.Time{}, false, nil
	}
	if len(f) != 2 {
		return time.Time{}, true, fmt.Errorf("%w: %q: want @at <time>, e.g. @at 2026-11-26T10:00:00Z", ErrInvalidCron, expr)
	}
	if at, err = time.Parse(time.RFC3339, f[1]); err == nil {
		return at.UTC().Truncate(time.Second), true, nil
	}
	if at, err = time.ParseInLocation("2006-01-02T15:04:05", f[1], loc); err != nil {
		return time.Time{}, true, fmt.Errorf("%w: %q: the time must be RFC 3339 (2026-11-26T10:00:00Z), or without an offset in the schedule's zone", ErrInvalidCron, expr)
	}
	return at.UTC(), true, nil
}

// OneOff reports a schedule that fires once ("@at"), and when.
func (s Schedule) OneOff() (time.Time, bool) { return s.at, !s.at.IsZero() }
