package node

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/calendar"
	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
)

// calendarRefresh is how often the loader reads the group's exclusion
// calendars again: an edit applies on every node within this time.
const calendarRefresh = 5 * time.Second

// calendars are the group's exclusion calendars as the node last read
// them. The loader writes them (refreshCalendars), the boss reads them
// as it fires claims (excluded).
type calendars struct {
	set    atomic.Pointer[calendar.Set]
	next   time.Time            // owned by the loader loop: when to read again
	warned map[string]time.Time // owned by the loader loop: a bad calendar's version already logged
}

// refreshCalendars reads the calendars again when calendarRefresh has
// passed. A read that fails keeps the last set: a fire is never let
// through a known exclusion because the database blinked.
func (n *Node) refreshCalendars(ctx context.Context) {
	now := time.Now()
	if now.Before(n.cals.next) {
		return
	}
	n.cals.next = now.Add(calendarRefresh)
	cs, err := n.store.Calendars(ctx, n.cfg.Group)
	if err != nil {
		n.log.Debug().Err(err).Msg("easyjob: calendars not read; the last ones read still apply")
		return
	}
	set, errs := calendar.NewSet(cs)
	for _, c := range cs {
		if err := errs[c.Name]; err != nil && !n.cals.warned[c.Name].Equal(c.UpdatedAt) {
			if n.cals.warned == nil {
				n.cals.warned = map[string]time.Time{}
			}
			n.cals.warned[c.Name] = c.UpdatedAt // once per version of the calendar
			n.log.Warn().Err(err).Str("calendar", c.Name).Msg("easyjob: a calendar that does not parse excludes nothing")
		}
	}
	n.cals.set.Store(&set)
}

// excluded says why claim c's fire is skipped by its task's calendar, ""
// when it is not (no calendar, or the fire is not in it).
func (n *Node) excluded(c *claim.Claim) string {
	return n.excludedAt(c.Spec.Opts.Calendar, c.Task.NextStartTime)
}

// excludedAt says why calendar name excludes a fire at, "" when it does
// not (no calendar, or the time is not in it).
func (n *Node) excludedAt(name string, at time.Time) string {
	if name == "" {
		return ""
	}
	set := n.cals.set.Load()
	if set == nil {
		return ""
	}
	if ex, rule := set.Excludes(name, at); ex {
		return fmt.Sprintf("excluded by calendar %q (%s)", name, rule)
	}
	return ""
}
