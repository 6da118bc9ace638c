package easyjob

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// TestClientTriggerRefusesWhatNothingRuns: a trigger runs or refuses. A
// chain step (run only after its parent) and a task that live nodes run
// but none registers are refused with ErrNotTriggerable, naming what to
// do, and nothing is written; with no live node at all the trigger waits
// for one (issue 30, item 6).
func TestClientTriggerRefusesWhatNothingRuns(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	now, _ := store.Now(ctx)
	later := now.Add(time.Hour)
	if _, err := store.UpsertTasks(ctx, "g", []repository.TaskDef{
		{Name: "step1", Cron: "0 0 * * * *", NextStartTime: later},
		{Name: "step2", Parent: "step1"},
		{Name: "step3", Parent: "step2"},
		{Name: "other", Cron: "0 0 * * * *", NextStartTime: later},
	}); err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(ctx, Config{Store: store, Group: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Trigger(ctx, "other"); err != nil {
		t.Fatalf("trigger with no live node: %v, want it written (it runs when a node starts)", err)
	}

	set, err := store.PublishTaskSet(ctx, []string{"step1", "step2", "step3"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := store.RegisterNode(ctx, "g", "n1", 1)
	if err != nil {
		t.Fatal(err)
	}
	n.TaskSet = set
	if _, err := store.Heartbeat(ctx, n); err != nil {
		t.Fatal(err)
	}

	before, _ := store.Task(ctx, "g", "step3")
	_, err = c.Trigger(ctx, "step3")
	if !errors.Is(err, ErrNotTriggerable) || !strings.Contains(err.Error(), `parent "step2"`) || !strings.Contains(err.Error(), `root "step1"`) {
		t.Fatalf("trigger of a chain step: %v, want ErrNotTriggerable naming its parent and root", err)
	}
	if after, _ := store.Task(ctx, "g", "step3"); after.Version != before.Version {
		t.Fatalf("a refused trigger wrote the row: version %d -> %d", before.Version, after.Version)
	}
	_, err = c.Trigger(ctx, "other")
	if !errors.Is(err, ErrNotTriggerable) || !strings.Contains(err.Error(), "registers") {
		t.Fatalf("trigger of a task no live node registers: %v, want ErrNotTriggerable", err)
	}
	if _, err := c.Trigger(ctx, "step1"); err != nil {
		t.Fatalf("trigger of the chain's root: %v", err)
	}
	if _, err := c.Trigger(ctx, "nope"); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("trigger of an unknown task: %v, want ErrTaskNotFound", err)
	}
}
