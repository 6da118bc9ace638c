package easyjob

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestRunLogs: what a job writes through Logger(ctx) is stored with its
// run, a chain step's with the step's; a job that runs on shows its
// lines before it ends (easyjob logs --follow); a log past RunLogLimit
// keeps its head and counts the rest.
func TestRunLogs(t *testing.T) {
	t.Parallel()
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, group := tc.store(t)
			release := make(chan struct{})
			cfg := fastConfig(store, group)
			cfg.RunLogLimit = 600
			start(t, cfg, func(s *Scheduler) {
				must(t, s.Register("root", "* * * * * *", func(ctx context.Context) error {
					Logger(ctx).Info("loaded", "rows", 42)
					Logger(ctx).Debug("below the level")
					return nil
				}))
				must(t, s.Register("step", "", func(ctx context.Context) error {
					Logger(ctx).With("k", "v").Warn("step ran")
					return nil
				}, Parent("root")))
				must(t, s.Register("long", "0 0 0 1 1 *", func(ctx context.Context) error {
					Logger(ctx).Info("started")
					select {
					case <-release:
					case <-ctx.Done():
					}
					for i := range 50 {
						Logger(ctx).Info("line", "i", i)
					}
					return nil
				}))
				must(t, s.Register("quiet", "* * * * * *", func(context.Context) error { return nil }))
			})
			c := clusterClient(t, store, group, 1)
			ctx := context.Background()
			if _, err := c.Trigger(ctx, "long"); err != nil {
				t.Fatal(err)
			}

			var l RunLog
			waitFor(t, 15*time.Second, "a finished run of root", func() bool {
				xs := runsOf(t, c, "root")
				if len(xs) == 0 {
					return false
				}
				var err error
				l, err = c.RunLog(ctx, "root", xs[0].ID)
				return err == nil
			})
			if !strings.Contains(l.Log, "level=INFO msg=loaded rows=42") || strings.Contains(l.Log, "below the level") ||
				l.Run.Status != repository.ExecSucceeded {
				t.Fatalf("root's run log = %q (%s)", l.Log, l.Run.Status)
			}
			waitFor(t, 15*time.Second, "a run of step", func() bool { return len(runsOf(t, c, "step")) > 0 })
			if l, err := c.RunLog(ctx, "step", runsOf(t, c, "step")[0].ID); err != nil ||
				!strings.Contains(l.Log, "level=WARN msg=\"step ran\" k=v") || strings.Contains(l.Log, "loaded") {
				t.Fatalf("step's run log = %q, %v", l.Log, err)
			}
			waitFor(t, 15*time.Second, "long's first line while it runs", func() bool {
				l, err := c.RunLog(ctx, "long", 0)
				return err == nil && l.Run.Status == repository.ExecRunning && strings.Contains(l.Log, "msg=started")
			})
			close(release)
			waitFor(t, 15*time.Second, "long's finished log", func() bool {
				l, err := c.RunLog(ctx, "long", 0)
				return err == nil && l.Run.Status == repository.ExecSucceeded
			})
			l, err := c.RunLog(ctx, "long", 0)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(l.Log, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(lines[0], "msg=started") || !strings.Contains(last, "more lines") ||
				len(l.Log)-len(last) > 601 {
				t.Fatalf("long's log past the limit = %q", l.Log)
			}
			xs := runsOf(t, c, "quiet")
			if len(xs) == 0 {
				t.Fatal("quiet never ran")
			}
			if l, err := c.RunLog(ctx, "quiet", xs[0].ID); err != nil || l.Log != "" {
				t.Fatalf("a silent job's log = %q, %v", l.Log, err)
			}
			if _, err := c.RunLog(ctx, "quiet", xs[0].ID+1_000_000); !errors.Is(err, ErrRunNotFound) {
				t.Fatalf("RunLog of no run = %v, want ErrRunNotFound", err)
			}
		})
	}
}

// TestLoggerOutsideAJob: outside a run, Logger is slog's default.
func TestLoggerOutsideAJob(t *testing.T) {
	if Logger(context.Background()) == nil {
		t.Fatal("nil logger")
	}
}
