package easyjob

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestCalendarSkipsFires: a schedule whose calendar excludes the even
// seconds runs on the odd ones only, and each excluded fire is in its
// history as skipped, naming the calendar; a schedule naming a calendar
// the group lacks, or a calendar that does not parse, is refused.
func TestCalendarSkipsFires(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, group := tc.store(t)
			if _, err := store.PutCalendar(ctx, group, ExclusionCalendar{Name: "even", Crons: []string{"*/2 * * * * *"}}); err != nil {
				t.Fatal(err)
			}
			seen, c := echoGroup(t, store, group)
			if _, err := c.Create(ctx, Schedule{Name: "odd", Handler: "echo", Cron: "* * * * * *", Args: echoArgs{N: 1},
				Options: []Option{Calendar("even")}}); err != nil {
				t.Fatal(err)
			}
			var xs []ExecutionInfo
			waitFor(t, 10*time.Second, "two runs and two excluded fires", func() bool {
				var err error
				xs, err = c.History(ctx, "odd", HistoryFilter{})
				ran, skipped := 0, 0
				for _, x := range xs {
					switch x.Status {
					case repository.ExecSucceeded:
						ran++
					case repository.ExecSkipped:
						skipped++
					}
				}
				return err == nil && ran >= 2 && skipped >= 2
			})
			for _, x := range xs {
				even := x.ScheduledAt.Second()%2 == 0
				switch {
				case even && (x.Status != repository.ExecSkipped || !strings.Contains(x.Error, `excluded by calendar "even"`)):
					t.Errorf("an even-second fire %s: %s %q, want skipped by the calendar", x.ScheduledAt.Format(time.TimeOnly), x.Status, x.Error)
				case !even && x.Status != repository.ExecSucceeded:
					t.Errorf("an odd-second fire %s: %s, want it run", x.ScheduledAt.Format(time.TimeOnly), x.Status)
				}
			}
			if n := seen.count("odd"); n == 0 {
				t.Error("the handler never ran")
			}

			_, err := c.Create(ctx, Schedule{Name: "nocal", Handler: "echo", Cron: "* * * * * *", Args: echoArgs{N: 1},
				Options: []Option{Calendar("gone")}})
			if !errors.Is(err, ErrCalendarNotFound) {
				t.Errorf("a schedule naming a missing calendar: %v, want ErrCalendarNotFound", err)
			}
			if _, err := c.SetCalendar(ctx, ExclusionCalendar{Name: "bad", Dates: []string{"2026-13-45"}}); !errors.Is(err, ErrInvalidCalendar) {
				t.Errorf("a calendar with a bad date: %v, want ErrInvalidCalendar", err)
			}
			if err := c.RemoveCalendar(ctx, "even"); err != nil {
				t.Fatal(err)
			}
			if err := c.RemoveCalendar(ctx, "even"); !errors.Is(err, ErrCalendarNotFound) {
				t.Errorf("removing it twice: %v, want ErrCalendarNotFound", err)
			}
		})
	}
}
