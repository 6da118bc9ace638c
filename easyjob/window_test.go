package easyjob

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestScheduleWindow: a schedule with a window fires only within it, each
// second of a two-second window once, then finishes; a window that ends
// before it starts is refused with nothing written.
func TestScheduleWindow(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, group := tc.store(t)
			seen, c := echoGroup(t, store, group)
			now, err := c.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			from := now.Truncate(time.Second).Add(2 * time.Second)
			info, err := c.Create(ctx, Schedule{Name: "w", Handler: "echo", Cron: "* * * * * *", Args: echoArgs{N: 1},
				Options: []Option{Window(from, from.Add(2*time.Second))}})
			if err != nil {
				t.Fatal(err)
			}
			if !info.NextStartTime.Equal(from) {
				t.Fatalf("first fire %s, want the window's start %s", info.NextStartTime, from)
			}
			waitFor(t, 10*time.Second, "the schedule to finish after its window", func() bool {
				ti, err := c.Task(ctx, "w")
				return err == nil && ti.Status == "finished"
			})
			xs, err := c.History(ctx, "w", HistoryFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(xs) != 3 || seen.count("w") != 3 {
				t.Fatalf("%d runs recorded, %d seen; want 3 (one per second of the window)", len(xs), seen.count("w"))
			}
			for _, x := range xs {
				if x.ScheduledAt.Before(from) || x.ScheduledAt.After(from.Add(2*time.Second)) {
					t.Errorf("a run scheduled at %s, outside the window", x.ScheduledAt)
				}
			}

			_, err = c.Create(ctx, Schedule{Name: "bad", Handler: "echo", Cron: "* * * * * *", Args: echoArgs{N: 1},
				Options: []Option{Window(from, from.Add(-time.Second))}})
			if !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("a window ending before its start: %v, want ErrInvalidOption", err)
			}
			if _, err := c.Task(ctx, "bad"); !errors.Is(err, ErrTaskNotFound) {
				t.Fatalf("the refused schedule: %v, want ErrTaskNotFound", err)
			}
		})
	}
}
