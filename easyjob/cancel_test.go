package easyjob

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestCancelRun: an operator's cancel reaches the job on whichever of two
// nodes runs it; the job's context says who cancelled it, the run is
// recorded cancelled naming the actor, and a task with no run in
// progress is refused.
func TestCancelRun(t *testing.T) {
	t.Parallel()
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			causes := make(chan error, 16)
			job := func(ctx context.Context) error {
				select {
				case <-ctx.Done():
					causes <- context.Cause(ctx)
					return ctx.Err()
				case <-time.After(time.Minute):
					return nil
				}
			}
			c := pairOf(t, tc.store, "long", "* * * * * *", job)
			ctx := WithActor(context.Background(), Actor{Name: "carol", Via: "test"})
			if err := c.Cancel(ctx, "missing"); !errors.Is(err, ErrTaskNotFound) {
				t.Fatalf("Cancel of an unknown task = %v, want ErrTaskNotFound", err)
			}
			waitFor(t, 15*time.Second, "a run in progress", func() bool {
				xs, err := c.History(ctx, "long", HistoryFilter{Limit: 5})
				return err == nil && len(xs) > 0 && xs[0].Status == repository.ExecRunning
			})
			asked := time.Now()
			if err := c.Cancel(ctx, "long"); err != nil {
				t.Fatalf("Cancel: %v", err)
			}
			select {
			case cause := <-causes:
				if !strings.Contains(cause.Error(), "cancelled by carol") {
					t.Fatalf("the job's context cause = %v, want it to name carol", cause)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the job's context was not cancelled within 10s of the cancel")
			}
			if d := time.Since(asked); d > 5*time.Second {
				t.Errorf("the cancel took %v to reach the job", d)
			}
			var run ExecutionInfo
			waitFor(t, 10*time.Second, "the cancelled run recorded", func() bool {
				for _, x := range runsOf(t, c, "long") {
					if x.Status == repository.ExecCancelled {
						run = x
						return true
					}
				}
				return false
			})
			if !strings.Contains(run.Error, "cancelled by carol") {
				t.Errorf("the cancelled run's error = %q, want it to name carol", run.Error)
			}
			es, err := c.Audit(ctx, AuditFilter{Task: "long"})
			if err != nil || len(es) == 0 || es[0].Action != "cancel" || es[0].Name != "carol" {
				t.Errorf("audit = %+v, %v; want carol's cancel", es, err)
			}
		})
	}
}

// TestCancelNotRunning: a task whose fire is not running cannot be
// cancelled, and nothing is recorded.
func TestCancelNotRunning(t *testing.T) {
	t.Parallel()
	c := pairOf(t, bothStores[0].store, "yearly", "0 0 0 1 1 *",
		func(context.Context) error { return nil })
	if err := c.Cancel(context.Background(), "yearly"); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Cancel of an idle task = %v, want ErrNotRunning", err)
	}
	if es, err := c.Audit(context.Background(), AuditFilter{Task: "yearly"}); err != nil || len(es) != 0 {
		t.Fatalf("audit after a refused cancel: %+v, %v", es, err)
	}
}
