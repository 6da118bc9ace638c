package easyjob

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestOverlapAllowAll: under OverlapAllowAll the fires of a task whose
// runs last 2.5 s start every second while earlier runs still run, at
// most OverlapLimit (2) at once on a node; a fire due at the limit is
// skipped and recorded so; each run is recorded when its job returns.
func TestOverlapAllowAll(t *testing.T) {
	t.Parallel()
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			job := func(ctx context.Context) error {
				select {
				case <-time.After(2500 * time.Millisecond):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			c := pairOf(t, tc.store, "many", "* * * * * *", job, Overlap(OverlapAllowAll), OverlapLimit(2))
			var ran, skipped []ExecutionInfo
			waitFor(t, 30*time.Second, "6 runs and 2 skips", func() bool {
				ran, skipped = ran[:0], skipped[:0]
				for _, x := range runsOf(t, c, "many") {
					switch x.Status {
					case repository.ExecSucceeded:
						ran = append(ran, x)
					case repository.ExecSkipped:
						skipped = append(skipped, x)
					}
				}
				return len(ran) >= 6 && len(skipped) >= 2
			})
			for _, x := range skipped {
				if !strings.Contains(x.Error, "overlap limit") {
					t.Errorf("skipped fire %s: %q, want the overlap limit named", x.ScheduledAt.Format(time.RFC3339), x.Error)
				}
			}
			overlapped := false
			for i, x := range ran {
				if x.Kind != RunCron {
					t.Errorf("run %s: kind %s, want cron", x.ScheduledAt.Format(time.RFC3339), x.Kind)
				}
				if lag := x.StartedAt.Sub(x.ScheduledAt); lag > 900*time.Millisecond {
					t.Errorf("run %s started %v late: allow_all must not wait for the runs before it", x.ScheduledAt.Format(time.RFC3339), lag)
				}
				at := 0 // runs of its node going on when it started
				for j, y := range ran {
					if j != i && y.NodeID == x.NodeID && !y.StartedAt.After(x.StartedAt) && y.FinishedAt.After(x.StartedAt) {
						at++
					}
				}
				if at > 0 {
					overlapped = true
				}
				if at >= 2 {
					t.Errorf("run %s started with %d runs of its node going on: over the limit of 2", x.ScheduledAt.Format(time.RFC3339), at)
				}
			}
			if !overlapped {
				t.Error("no run overlapped another: allow_all ran them one after another")
			}
			fires := slices.Concat(ran, skipped)
			sort.Slice(fires, func(i, j int) bool { return fires[i].ScheduledAt.Before(fires[j].ScheduledAt) })
			for i := 1; i < len(fires); i++ {
				if fires[i].ScheduledAt.Equal(fires[i-1].ScheduledAt) {
					t.Errorf("fire %s recorded twice", fires[i].ScheduledAt.Format(time.RFC3339))
				}
			}
		})
	}
}

// TestOverlapAllowAllRefused: allow_all with retries, in a chain or with
// InTx is refused at registration, and an out-of-range limit too.
func TestOverlapAllowAllRefused(t *testing.T) {
	nop := func(context.Context) error { return nil }
	for _, tc := range []struct {
		name string
		reg  func(s *Scheduler) error
	}{
		{"retries", func(s *Scheduler) error {
			return s.Register("a", "* * * * * *", nop, Overlap(OverlapAllowAll), Retry(2, time.Second))
		}},
		{"chain", func(s *Scheduler) error {
			if err := s.Register("a", "* * * * * *", nop, Overlap(OverlapAllowAll)); err != nil {
				return err
			}
			return s.Register("b", "", nop, Parent("a"))
		}},
		{"limit", func(s *Scheduler) error {
			return s.Register("a", "* * * * * *", nop, Overlap(OverlapAllowAll), OverlapLimit(0))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			err = tc.reg(s)
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err = s.Run(ctx)
			}
			if !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("err = %v, want ErrInvalidOption", err)
			}
		})
	}
}
