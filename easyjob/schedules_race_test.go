package easyjob

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestEditWhileRunning: an update or a trigger of a schedule whose fire
// is running never runs a fire twice, the fires after it follow the new
// definition at once (no wait for a poll), and every run is recorded.
func TestEditWhileRunning(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, group := tc.store(t)
			var mu sync.Mutex
			fires := map[time.Time][]int{} // scheduled time -> the n of each call
			running := make(chan struct{}, 1)
			cfg := fastConfig(store, group)
			cfg.PollInterval, cfg.FetchWindow = time.Second, 5*time.Second // the defaults' shape: a poll would be late
			start(t, cfg, func(s *Scheduler) {
				_ = s.Handle("slow", HandlerOf(func(ctx context.Context, a echoArgs) error {
					info, _ := InfoFromContext(ctx)
					mu.Lock()
					fires[info.ScheduledAt] = append(fires[info.ScheduledAt], a.N)
					mu.Unlock()
					select {
					case running <- struct{}{}:
					default:
					}
					time.Sleep(400 * time.Millisecond)
					return nil
				}))
			})
			c := liveClient(t, store, group)
			if _, err := c.Create(ctx, Schedule{Name: "s", Handler: "slow", Cron: "* * * * * *", Args: echoArgs{N: 1}}); err != nil {
				t.Fatal(err)
			}
			drain := func() {
				select {
				case <-running:
				default:
				}
			}
			for i, edit := range []func() error{
				func() error {
					_, err := c.Update(ctx, Schedule{Name: "s", Handler: "slow", Cron: "* * * * * *", Args: echoArgs{N: 2}})
					return err
				},
				func() error { _, err := c.Trigger(ctx, "s", WithArgs(json.RawMessage(`{"n":3}`))); return err },
				func() error {
					_, err := c.Update(ctx, Schedule{Name: "s", Handler: "slow", Cron: "*/2 * * * * *", Args: echoArgs{N: 4}})
					return err
				},
			} {
				drain()
				select {
				case <-running:
				case <-time.After(5 * time.Second):
					t.Fatalf("edit %d: no fire started", i)
				}
				if err := edit(); err != nil {
					t.Fatalf("edit %d: %v", i, err)
				}
				want := []int{2, 3, 4}[i]
				waitFor(t, 2500*time.Millisecond, "a run with the edit's args", func() bool {
					mu.Lock()
					defer mu.Unlock()
					for _, ns := range fires {
						for _, n := range ns {
							if n == want {
								return true
							}
						}
					}
					return false
				})
			}
			waitFor(t, 5*time.Second, "every run recorded", func() bool {
				xs, _ := c.History(ctx, "s", HistoryFilter{Limit: 1000})
				mu.Lock()
				defer mu.Unlock()
				calls := 0
				for _, ns := range fires {
					calls += len(ns)
				}
				done := 0
				for _, x := range xs {
					if x.Status == repository.ExecSucceeded {
						done++
					}
				}
				return done >= calls-1 // the last may still run
			})
			mu.Lock()
			defer mu.Unlock()
			for at, ns := range fires {
				if len(ns) > 1 {
					t.Errorf("the fire at %s ran %d times (args n=%v)", at.Format(time.TimeOnly), len(ns), ns)
				}
			}
		})
	}
}

// TestEditBetweenFires: edits between the fires of an every-second
// schedule, whose next fire is claimed ahead (a kept claim), never run a
// fire twice: the claimed fire runs once, with the definition it was
// claimed with, and the new definition takes over after it.
func TestEditBetweenFires(t *testing.T) {
	ctx := context.Background()
	store, group := pgStore(t)
	var mu sync.Mutex
	fires := map[time.Time][]int{}
	start(t, fastConfig(store, group), func(s *Scheduler) {
		_ = s.Handle("fast", HandlerOf(func(ctx context.Context, a echoArgs) error {
			info, _ := InfoFromContext(ctx)
			mu.Lock()
			fires[info.ScheduledAt] = append(fires[info.ScheduledAt], a.N)
			mu.Unlock()
			return nil
		}))
	})
	c := liveClient(t, store, group)
	if _, err := c.Create(ctx, Schedule{Name: "f", Handler: "fast", Cron: "* * * * * *", Args: echoArgs{N: 0}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		cron := []string{"* * * * * *", "*/2 * * * * *"}[i%2]
		// Mid-second, after the second's fire ran and the next is claimed.
		now, _ := store.Now(ctx)
		time.Sleep(now.Truncate(time.Second).Add(1500 * time.Millisecond).Sub(now))
		if _, err := c.Update(ctx, Schedule{Name: "f", Handler: "fast", Cron: cron, Args: echoArgs{N: i}}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, "a run with the last edit's args", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, ns := range fires {
			if slices.Contains(ns, 6) {
				return true
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	for at, ns := range fires {
		if len(ns) > 1 {
			t.Errorf("the fire at %s ran %d times (args n=%v)", at.Format(time.TimeOnly), len(ns), ns)
		}
	}
}
