package easyjob

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/node"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// TestConcurrentRegistration: 5 nodes starting at once write one row per
// task; a later node with a changed cron updates the row and its next fire.
func TestConcurrentRegistration(t *testing.T) {
	t.Parallel()
	store, group := pgStore(t)
	var l ledger
	reg := func(s *Scheduler) {
		for _, name := range []string{"a", "b", "c"} {
			mustRegister(t, s, name, "0 0 * * * *", l.job(nil))
		}
		mustRegister(t, s, "a-child", "", l.job(nil), Parent("a"))
	}
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() { start(t, Config{Store: store, Group: group}, reg) })
	}
	wg.Wait()
	tasks, err := store.Tasks(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 4 {
		t.Fatalf("%d task rows after 5 concurrent registrations, want 4: %+v", len(tasks), tasks)
	}
	before, _ := store.Task(context.Background(), group, "a")

	start(t, Config{Store: store, Group: group}, func(s *Scheduler) {
		mustRegister(t, s, "a", "*/2 * * * * *", l.job(nil))
	})
	after, err := store.Task(context.Background(), group, "a")
	if err != nil {
		t.Fatal(err)
	}
	if after.Cron != "*/2 * * * * *" || !after.NextStartTime.Before(before.NextStartTime) || after.Version <= before.Version {
		t.Fatalf("changed cron not applied: before %+v after %+v", before, after)
	}
	waitFor(t, 6*time.Second, "the rescheduled task fires", func() bool { return l.count("a") >= 1 })
}

// TestNodeWithoutFunctionNeverClaims: in a rolling deploy a node that does
// not register a task never claims it, even when it is overdue.
func TestNodeWithoutFunctionNeverClaims(t *testing.T) {
	t.Parallel()
	store, group := pgStore(t)
	var l ledger
	old := start(t, Config{Store: store, Group: group, Strategy: "id_hash"}, func(s *Scheduler) {
		mustRegister(t, s, "shared", "* * * * * *", l.job(nil))
	})
	fresh := start(t, Config{Store: store, Group: group, Strategy: "id_hash"}, func(s *Scheduler) {
		mustRegister(t, s, "shared", "* * * * * *", l.job(nil))
		mustRegister(t, s, "new-only", "* * * * * *", l.job(nil))
	})
	time.Sleep(5 * time.Second) // long enough for the steal threshold to pass several times
	// new-only is given to the old node half the time by id_hash; the new
	// node steals it past the steal threshold, so it still fires.
	if l.count("new-only") < 2 {
		t.Fatalf("new-only ran %d times", l.count("new-only"))
	}
	for _, f := range l.snapshot() {
		if f.task == "new-only" && f.node == int64(old.n.ID()) {
			t.Fatalf("node %d ran new-only without having its function", old.n.ID())
		}
	}
	_ = fresh
}

// TestNewTasksFireFirstAfterRegistration: a node registering thousands of
// new every-second tasks plans their first fire after its registration
// lead (150 µs per task), not at the next second, which it could not
// claim in time. 7 000 tasks lead 1.05 s: the next second after the
// registration began is always earlier than that.
func TestNewTasksFireFirstAfterRegistration(t *testing.T) {
	t.Parallel()
	const tasks = 7000
	store := memory.New()
	before, err := store.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	start(t, fastConfig(store, "lead"), func(s *Scheduler) {
		for i := range tasks {
			mustRegister(t, s, fmt.Sprintf("t%04d", i), "* * * * * *", func(context.Context) error { return nil })
		}
	})
	ts, err := store.Tasks(context.Background(), "lead")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != tasks {
		t.Fatalf("%d tasks registered, want %d", len(ts), tasks)
	}
	earliest := before.Add(time.Duration(tasks) * node.RegisterLeadPerTask) // 1.05 s
	for _, tk := range ts {
		if first := tk.NextStartTime; first.Before(earliest) {
			t.Fatalf("task %s first fires at %s, before registration start + lead (%s)", tk.Name, first, earliest)
		}
	}
}
