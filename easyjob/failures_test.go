package easyjob

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestPauseAfterFailures: a task whose runs keep failing is paused after
// the third failure in a row, by its node, in the audit log; it runs no
// more until resumed; a success resets the count.
func TestPauseAfterFailures(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, group := tc.store(t)
			var l ledger
			start(t, fastConfig(store, group), func(s *Scheduler) {
				if err := s.Register("broken", "* * * * * *", l.job(errors.New("the mail server is down")), PauseAfterFailures(3)); err != nil {
					t.Fatal(err)
				}
			})
			c := liveClient(t, store, group)
			waitFor(t, 10*time.Second, "the task paused", func() bool {
				ti, err := c.Task(ctx, "broken")
				return err == nil && ti.Status == repository.TaskPaused
			})
			ti, _ := c.Task(ctx, "broken")
			if ti.Failures != 3 {
				t.Errorf("paused with %d failures counted, want 3", ti.Failures)
			}
			xs, _ := c.History(ctx, "broken", HistoryFilter{Status: repository.ExecFailed})
			if len(xs) != 3 {
				t.Errorf("%d failed runs recorded, want 3 (no run after the third failure)", len(xs))
			}
			entries, err := c.Audit(ctx, AuditFilter{Task: "broken"})
			if err != nil || len(entries) != 1 || entries[0].Action != "pause" || entries[0].Via != "node" ||
				entries[0].Detail != "after 3 failed runs in a row (the last: the mail server is down)" {
				t.Fatalf("audit of the pause = %+v, %v; want one pause via node, saying why", entries, err)
			}
			ran := l.count("broken")
			time.Sleep(1500 * time.Millisecond) // paused: no fire comes in this time (asserting an absence)
			if n := l.count("broken"); n != ran {
				t.Errorf("a paused task ran %d more times", n-ran)
			}
		})
	}
}
