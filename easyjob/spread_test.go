package easyjob

import (
	"context"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
)

// TestSpreadMovesGrid: a task registered with Spread on two nodes fires
// at its cron's times + its one offset (both nodes compute the same: when
// the node that fired it leaves, the other's fires land on the one grid,
// none twice), its history keeps
// the moved time, and it starts on that time, not a misfire. A schedule
// created at runtime with Spread is stored with its moved next fire.
func TestSpreadMovesGrid(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, group := tc.store(t)
			const window = 2 * time.Second
			off := SpreadOffset("spread", window)
			if off%time.Second == 0 || off != schedule.SpreadOf("spread", window) {
				t.Fatalf("offset %v: want a fraction of a second, as the schedule computes it", off)
			}
			l := &ledger{}
			reg := func(s *Scheduler) {
				if err := s.Register("spread", "*/2 * * * * *", l.job(nil), Spread(window)); err != nil {
					t.Fatal(err)
				}
			}
			nodes := []*testNode{start(t, fastConfig(store, group), reg), start(t, fastConfig(store, group), reg)}
			waitAllLive(t, nodes)
			waitFor(t, 15*time.Second, "three fires", func() bool { return l.count("spread") >= 3 })
			// The node that fired leaves: the other goes on, on the same grid.
			first := l.snapshot()[0].node
			for _, n := range nodes {
				if int64(n.n.ID()) == first {
					n.stop(t)
				}
			}
			waitFor(t, 15*time.Second, "three fires on the other node", func() bool {
				k := 0
				for _, f := range l.snapshot() {
					if f.node != first {
						k++
					}
				}
				return k >= 3
			})
			on := map[int64]int{}
			for _, f := range l.snapshot() {
				on[f.node]++
				cron := f.scheduled.Add(-off)
				if cron.Nanosecond() != 0 || cron.Unix()%2 != 0 {
					t.Errorf("fire at %s is not an even second + %v", f.scheduled.Format("15:04:05.000"), off)
				}
				if d := f.started.Sub(f.scheduled); d < -5*time.Millisecond || d > 500*time.Millisecond {
					t.Errorf("fire at %s started %v after it, want within 500ms", f.scheduled.Format("15:04:05.000"), d)
				}
			}
			if dups := l.duplicates(); len(dups) > 0 {
				t.Errorf("fires run twice: %v", dups)
			}
			c, err := NewClient(ctx, Config{Store: store, Group: group})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			xs, err := c.History(ctx, "spread", HistoryFilter{Limit: 1})
			if err != nil || len(xs) == 0 || !xs[0].ScheduledAt.Add(-off).Equal(xs[0].ScheduledAt.Add(-off).Truncate(time.Second)) || xs[0].Misfire != "" {
				t.Errorf("history %+v %v: want the moved time, no misfire", xs, err)
			}
			t.Logf("fires by node: %v", on)

			info, err := c.Create(ctx, Schedule{Name: "hourly", Handler: "none", Cron: "0 * * * *", Options: []Option{Spread(time.Hour)}}, AllowUnknownHandler())
			if err != nil {
				t.Fatal(err)
			}
			hourOff := SpreadOffset("hourly", time.Hour)
			if got := info.NextStartTime.Add(-hourOff); got.Minute() != 0 || got.Second() != 0 || got.Nanosecond() != 0 {
				t.Errorf("created with next fire %s: want an hour + %v", info.NextStartTime.Format(time.RFC3339Nano), hourOff)
			}
		})
	}
}
