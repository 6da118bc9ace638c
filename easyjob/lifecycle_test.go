package easyjob

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
	"github.com/easyjob-go/easyjob/repository/storetest"
)

// TestOverrideSurvivesRestarts: an operator's reschedule and pause hold
// while every replica restarts with unchanged code (autoscaling, a deploy
// of other changes); a new cron in code ends the reschedule.
func TestOverrideSurvivesRestarts(t *testing.T) {
	store, group := pgStore(t)
	ctx := t.Context()
	var l ledger
	code := func(cron string) func(s *Scheduler) {
		return func(s *Scheduler) {
			mustRegister(t, s, "five", cron, l.job(nil))
			// Yearly: a fire claimed before the pause (within the fetch
			// window) runs by design, so none may fall in the test.
			mustRegister(t, s, "parked", "0 0 0 1 1 *", l.job(nil))
		}
	}
	v1 := code("0 */5 * * * *")
	nodes := []*testNode{start(t, fastConfig(store, group), v1), start(t, fastConfig(store, group), v1)}
	c := newTestClient(t, store, group)
	over, err := c.Reschedule(ctx, "five", "0 0 0 1 1 *")
	if err != nil {
		t.Fatal(err)
	}
	if !over.Overridden || over.CodeCron != "0 */5 * * * *" {
		t.Fatalf("after Reschedule: %+v", over)
	}
	if _, err := c.Pause(ctx, "parked"); err != nil {
		t.Fatal(err)
	}

	// Every replica is replaced by one running the same code, twice over.
	for round := range 2 {
		for _, n := range nodes {
			n.stop(t)
		}
		nodes = []*testNode{start(t, fastConfig(store, group), v1), start(t, fastConfig(store, group), v1)}
		waitAllLive(t, nodes)
		five := mustTask(t, c, "five")
		if five.Cron != "0 0 0 1 1 *" || !five.Overridden || !five.NextStartTime.Equal(over.NextStartTime) || five.CodeCron != "0 */5 * * * *" {
			t.Fatalf("round %d: the override did not survive a restart of every replica: %+v", round, five)
		}
		if parked := mustTask(t, c, "parked"); !parked.Paused || parked.Status != repository.TaskPaused {
			t.Fatalf("round %d: the pause did not survive: %+v", round, parked)
		}
	}

	// A deploy with a new cron in code: the code wins.
	for _, n := range nodes {
		n.stop(t)
	}
	start(t, fastConfig(store, group), code("* * * * * *"))
	five := mustTask(t, c, "five")
	if five.Cron != "* * * * * *" || five.Overridden || five.CodeCron != "* * * * * *" {
		t.Fatalf("new code cron: %+v", five)
	}
	waitFor(t, 5*time.Second, "the new cron to fire", func() bool { return l.count("five") >= 2 })
	if parked := mustTask(t, c, "parked"); !parked.Paused || l.count("parked") != 0 {
		t.Fatalf("the pause was lifted: %+v, %d fires", parked, l.count("parked"))
	}
}

// TestResetSchedule: the operator clears an override; the code's cron is
// back at once.
func TestResetSchedule(t *testing.T) {
	store := memory.New()
	var l ledger
	start(t, fastConfig(store, "reset"), func(s *Scheduler) { mustRegister(t, s, "job", "* * * * * *", l.job(nil)) })
	c := newTestClient(t, store, "reset")
	ctx := t.Context()
	if _, err := c.Reschedule(ctx, "job", "0 0 0 1 1 *"); err != nil {
		t.Fatal(err)
	}
	got, err := c.ResetSchedule(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if got.Cron != "* * * * * *" || got.Overridden {
		t.Fatalf("after ResetSchedule: %+v", got)
	}
	before := l.count("job")
	waitFor(t, 5*time.Second, "fires on the code's cron again", func() bool { return l.count("job") >= before+2 })
	again, err := c.ResetSchedule(ctx, "job") // nothing to reset
	if err != nil || again.Cron != "* * * * * *" {
		t.Fatalf("second ResetSchedule: %+v, %v", again, err)
	}
	if _, err := c.ResetSchedule(ctx, "ghost"); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("ResetSchedule(ghost): %v", err)
	}
}

// staleSetup runs version 1 of a service (tasks keep and drop, drop with a
// child), then replaces it with version 2, which no longer has drop.
func staleSetup(t *testing.T, store repository.Store, group string, cfg func(Config) Config) (*ledger, *testNode) {
	t.Helper()
	var l ledger
	v1 := start(t, cfg(fastConfig(store, group)), func(s *Scheduler) {
		mustRegister(t, s, "keep", "* * * * * *", l.job(nil))
		mustRegister(t, s, "drop", "* * * * * *", l.job(nil))
		mustRegister(t, s, "drop-kid", "", l.job(nil), Parent("drop"))
	})
	waitFor(t, 5*time.Second, "drop to run", func() bool { return l.count("drop-kid") > 0 })
	v1.stop(t)
	v2 := start(t, cfg(fastConfig(store, group)), func(s *Scheduler) { mustRegister(t, s, "keep", "* * * * * *", l.job(nil)) })
	return &l, v2
}

func TestStaleTasksAndRemove(t *testing.T) {
	store := memory.New()
	_, v2 := staleSetup(t, store, "stale", func(c Config) Config { return c })
	c := newTestClient(t, store, "stale")
	ctx := t.Context()
	stale := func() map[string]bool {
		ts, err := c.Tasks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, ti := range ts {
			out[ti.Name] = ti.Stale
		}
		return out
	}
	waitFor(t, 5*time.Second, "drop and drop-kid stale", func() bool {
		s := stale()
		return s["drop"] && s["drop-kid"] && !s["keep"]
	})
	if ti := mustTask(t, c, "drop"); !ti.Stale {
		t.Errorf("Task(drop) not stale: %+v", ti)
	}

	_, err := c.Remove(ctx, "keep", RemoveOptions{})
	if !errors.Is(err, ErrTaskInUse) {
		t.Fatalf("Remove(keep) while v2 registers it: %v, want ErrTaskInUse", err)
	}
	removed, err := c.Remove(ctx, "drop", RemoveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 || removed[0].Name != "drop" || removed[1].Name != "drop-kid" {
		t.Fatalf("removed %+v", removed)
	}
	if _, err := c.Task(ctx, "drop"); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("Task(drop) after Remove: %v", err)
	}
	if runs, err := c.History(ctx, "drop", HistoryFilter{}); err != nil || len(runs) == 0 {
		t.Errorf("history of drop not kept: %d runs, %v", len(runs), err)
	}
	if _, err := c.Remove(ctx, "drop", RemoveOptions{}); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("second Remove: %v", err)
	}

	// Forced, with the history: even a task a live node registers.
	if _, err := c.Remove(ctx, "keep", RemoveOptions{Force: true, DropHistory: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.History(ctx, "keep", HistoryFilter{}); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("history of keep after --drop-history: %v", err)
	}
	v2.stop(t)
}

// TestPruneStaleTasks: with StaleTaskExpiry, the tasks no live node
// registers are removed (history kept) once stale that long, and only
// them.
func TestPruneStaleTasks(t *testing.T) {
	store := memory.New()
	removed := &removals{}
	_, v2 := staleSetup(t, store, "prune", func(c Config) Config {
		c.StaleTaskExpiry = 3 * time.Second
		c.Observer = removed
		return c
	})
	ctx := t.Context()
	waitAllLive(t, []*testNode{v2})
	v2.beatAfter(t, time.Now(), 5*time.Second) // its row carries its task set
	if err := v2.n.PruneStale(ctx); err != nil {
		t.Fatal(err)
	}
	drop, err := store.Task(ctx, "prune", "drop")
	if err != nil || drop.StaleSince.IsZero() {
		t.Fatalf("drop not marked stale: %+v, %v", drop, err)
	}
	if keep, _ := store.Task(ctx, "prune", "keep"); !keep.StaleSince.IsZero() {
		t.Fatalf("keep marked stale: %+v", keep)
	}
	if err := v2.n.PruneStale(ctx); err != nil { // too early: kept
		t.Fatal(err)
	}
	if _, err := store.Task(ctx, "prune", "drop"); err != nil {
		t.Fatalf("drop removed before StaleTaskExpiry: %v", err)
	}
	// The node's own pass at start may have marked it first: wait from the mark.
	waitFor(t, 10*time.Second, "drop stale for StaleTaskExpiry", func() bool {
		now, _ := store.Now(ctx)
		return now.Sub(drop.StaleSince) > 3*time.Second
	})
	if err := v2.n.PruneStale(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"drop", "drop-kid"} {
		if _, err := store.Task(ctx, "prune", name); !errors.Is(err, ErrTaskNotFound) {
			t.Errorf("%s not pruned: %v", name, err)
		}
	}
	if xs, err := store.History(ctx, "prune", "drop", repository.HistoryFilter{}); err != nil || len(xs) == 0 {
		t.Errorf("history of the pruned task: %d runs, %v", len(xs), err)
	}
	if _, err := store.Task(ctx, "prune", "keep"); err != nil {
		t.Errorf("keep pruned: %v", err)
	}
	// The observer learns of each removal, so metrics drop its series.
	if got := removed.tasks(); !slices.Equal(got, []string{"drop", "drop-kid"}) {
		t.Errorf("EventTaskRemoved for %v, want drop and drop-kid", got)
	}
}

// removals records the tasks of the EventTaskRemoved it observes.
type removals struct {
	mu    sync.Mutex
	names []string
}

func (r *removals) Observe(e observe.Event) {
	if e.Kind != observe.EventTaskRemoved {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, e.Group+"/"+e.Task)
}

func (r *removals) tasks() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.names))
	for _, n := range r.names {
		out = append(out, strings.TrimPrefix(n, "prune/"))
	}
	slices.Sort(out)
	return out
}

func TestNewValidatesConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"unknown strategy":   {Strategy: "fastest"},
		"blank group":        {Group: "   "},
		"spaced group":       {Group: " billing"},
		"negative staleness": {StaleTaskExpiry: -time.Second},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig", name, err)
		}
	}
	if _, err := New(Config{Strategy: "id_hash", Group: "billing"}); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

// TestOneTaskActionsReadItsChain: remove, pause and resume of a chain's
// child, and listing the nodes, never read the group's every task.
func TestOneTaskActionsReadItsChain(t *testing.T) {
	ctx := t.Context()
	mem := memory.New()
	now, err := mem.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = mem.UpsertTasks(ctx, "g", []repository.TaskDef{
		{Name: "root", Cron: "0 0 * * * *", NextStartTime: now.Add(time.Hour)},
		{Name: "child", Parent: "root"},
		{Name: "grandchild", Parent: "child"},
		{Name: "other", Cron: "0 0 * * * *", NextStartTime: now.Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(ctx, Config{Store: storetest.NoWholeGroupReads(t, mem), Group: "g"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Pause(ctx, "child")
	if err != nil || info.Parent != "root" || !info.Paused {
		t.Fatalf("pause child: %+v, %v; want paused, parent root", info, err)
	}
	if info, err = c.Resume(ctx, "child"); err != nil || info.Parent != "root" {
		t.Fatalf("resume child: %+v, %v", info, err)
	}
	if _, err := c.Nodes(ctx); err != nil {
		t.Fatal(err)
	}
	gone, err := c.Remove(ctx, "child", RemoveOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(gone) != 2 || gone[0].Name != "child" || gone[0].Parent != "root" || gone[1].Name != "grandchild" || gone[1].Parent != "child" {
		t.Fatalf("removed %+v, want child (parent root), grandchild (parent child)", gone)
	}
}
