package easyjob

import (
	"context"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
)

// TestJitterDelaysFires: each cron fire of a task with a jitter starts
// its own hashed delay after its time (the same on any node), is not a
// misfire for it, and history keeps the fire's own time.
func TestJitterDelaysFires(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, group := tc.store(t)
			_, c := echoGroup(t, store, group)
			const upTo = 900 * time.Millisecond
			if _, err := c.Create(ctx, Schedule{Name: "spread", Handler: "echo", Cron: "* * * * * *", Args: echoArgs{N: 1},
				Options: []Option{Jitter(upTo)}}); err != nil {
				t.Fatal(err)
			}
			var xs []ExecutionInfo
			waitFor(t, 10*time.Second, "three runs", func() bool {
				xs, _ = c.History(ctx, "spread", HistoryFilter{})
				return len(xs) >= 3
			})
			for _, x := range xs {
				want := x.ScheduledAt.Add(schedule.JitterOf("spread", x.ScheduledAt, upTo))
				if d := x.StartedAt.Sub(want); d < -5*time.Millisecond || d > 300*time.Millisecond || x.Misfire != "" {
					t.Errorf("fire %s started %s after its jittered time %s (misfire %q); want within 300ms, no misfire",
						x.ScheduledAt.Format(time.TimeOnly), d, want.Format("15:04:05.000"), x.Misfire)
				}
				if x.ScheduledAt.Nanosecond() != 0 {
					t.Errorf("history keeps %s, want the fire's own whole second", x.ScheduledAt)
				}
			}
		})
	}
}
