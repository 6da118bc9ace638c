package easyjob

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// TestRunKinds: every run records why it ran. A triggered run is manual
// (with its own fire time, the trigger's, not the previous finish), a
// retry is a retry, a chain step is a chain run, a cron fire is a cron
// run (issue 30, item 7).
func TestRunKinds(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	var flaky atomic.Int32
	start(t, fastConfig(store, "kinds"), func(s *Scheduler) {
		must(t, s.Register("yearly", "0 0 0 1 1 *", func(context.Context) error { return nil }))
		must(t, s.Register("cron", "* * * * * *", func(context.Context) error { return nil }))
		must(t, s.Register("flaky", "0 0 0 1 1 *", func(context.Context) error {
			if flaky.Add(1) == 1 {
				return errors.New("first try fails")
			}
			return nil
		}, Retry(1, 10*time.Millisecond)))
		must(t, s.Register("step", "", func(context.Context) error { return nil }, Parent("cron")))
	})
	c, err := NewClient(ctx, Config{Store: store, Group: "kinds"})
	must(t, err)
	triggered, _ := store.Now(ctx)
	for _, name := range []string{"yearly", "flaky"} {
		if _, err := c.Trigger(ctx, name); err != nil {
			t.Fatalf("Trigger(%s): %v", name, err)
		}
	}
	kinds := func(name string) []RunKind {
		xs, err := c.History(ctx, name, HistoryFilter{})
		must(t, err)
		var out []RunKind
		for _, x := range xs {
			if x.Status.Final() {
				out = append(out, x.Kind)
			}
		}
		return out
	}
	waitFor(t, 10*time.Second, "runs of every kind", func() bool {
		return len(kinds("yearly")) == 1 && len(kinds("flaky")) == 2 && len(kinds("cron")) >= 1 && len(kinds("step")) >= 1
	})
	if got := kinds("yearly"); got[0] != RunManual {
		t.Errorf("triggered run kind = %q, want manual", got[0])
	}
	xs, _ := c.History(ctx, "yearly", HistoryFilter{})
	if d := xs[0].ScheduledAt.Sub(triggered); d < 0 || d > 2*time.Second {
		t.Errorf("triggered run scheduled at %v, %v after the trigger; want the trigger's time", xs[0].ScheduledAt, d)
	}
	if got := kinds("flaky"); got[0] != RunRetry || got[1] != RunManual { // newest first
		t.Errorf("flaky kinds (newest first) = %v, want [retry manual]", got)
	}
	if got := kinds("cron"); got[0] != RunCron {
		t.Errorf("cron run kind = %q", got[0])
	}
	if got := kinds("step"); got[0] != RunChain {
		t.Errorf("chain step kind = %q", got[0])
	}
}

// TestAuditLog: every operator action made through a Client is recorded
// with who made it, through what and from where; an action that failed is
// not (issue 30, item 7).
func TestAuditLog(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	now, _ := store.Now(ctx)
	if _, err := store.UpsertTasks(ctx, "g", []repository.TaskDef{
		{Name: "a", Cron: "0 0 * * * *", NextStartTime: now.Add(time.Hour)},
		{Name: "b", Cron: "0 0 * * * *", NextStartTime: now.Add(time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(ctx, Config{Store: store, Group: "g"})
	must(t, err)
	alice := WithActor(ctx, Actor{Name: "alice", Via: "dashboard", From: "10.0.0.7"})
	steps := []struct {
		action, task string
		do           func() error
	}{
		{"pause", "a", func() error { _, err := c.Pause(alice, "a"); return err }},
		{"resume", "a", func() error { _, err := c.Resume(alice, "a"); return err }},
		{"trigger", "a", func() error { _, err := c.Trigger(alice, "a"); return err }},
		{"reschedule", "a", func() error { _, err := c.Reschedule(alice, "a", "0 30 * * * *"); return err }},
		{"reset", "a", func() error { _, err := c.ResetSchedule(alice, "a"); return err }},
		{"remove", "b", func() error { _, err := c.Remove(alice, "b", RemoveOptions{Force: true}); return err }},
		{"prune", "", func() error { _, err := c.PruneHistory(ctx, time.Hour, 0); return err }}, // the default actor
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.action, err)
		}
	}
	if _, err := c.Pause(alice, "nope"); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("Pause(nope) = %v", err)
	}
	if _, err := c.Reschedule(alice, "a", "not a cron"); err == nil {
		t.Fatal("Reschedule with a bad cron succeeded")
	}
	got, err := c.Audit(ctx, AuditFilter{})
	must(t, err)
	if len(got) != len(steps) {
		t.Fatalf("audit log has %d entries, want %d: %+v", len(got), len(steps), got)
	}
	for i, s := range steps {
		e := got[len(steps)-1-i]
		if e.Action != s.action || e.Task != s.task {
			t.Errorf("entry %d = %s %q, want %s %q", i, e.Action, e.Task, s.action, s.task)
		}
		if s.action == "prune" {
			if e.Via != "client" || e.Name == "" || !strings.Contains(e.Detail, "deleted 0 runs") {
				t.Errorf("prune entry = %+v, want the default actor via client and the count", e)
			}
			continue
		}
		if e.Name != "alice" || e.Via != "dashboard" || e.From != "10.0.0.7" {
			t.Errorf("entry %d actor = %+v, want alice via dashboard from 10.0.0.7", i, e.Actor)
		}
	}
	if d := got[len(steps)-4].Detail; !strings.Contains(d, `"0 0 * * * *" -> "0 30 * * * *"`) {
		t.Errorf("reschedule detail = %q, want old and new cron", d)
	}
	if a, _ := c.Audit(ctx, AuditFilter{Task: "b"}); len(a) != 1 || !strings.Contains(a[0].Detail, "forced") {
		t.Errorf("audit of b = %+v, want the forced removal", a)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
