package storetest

import (
	"errors"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The task lifecycle: operator overrides against registrations, stale
// marks, removal (with or without the history) and revival.
var lifecycleCases = []testCase{
	{"InsertTakesCodeCron", testInsertCodeCron},
	{"OverrideSurvivesSameCode", testOverrideSurvives},
	{"OverrideYieldsToNewCode", testOverrideYields},
	{"RescheduleToCodeCronClears", testRescheduleToCodeCron},
	{"TimezoneChangeClearsOverride", testTimezoneClearsOverride},
	{"PauseSurvivesRegistration", testPauseSurvives},
	{"MarkStale", testMarkStale},
	{"UpsertClearsStale", testUpsertClearsStale},
	{"RemoveDropsSubtreeAndHistory", testRemoveDrops},
	{"RemoveKeepsHistory", testRemoveKeepsHistory},
	{"RemoveIfStale", testRemoveIfStale},
	{"RemoveUnknown", testRemoveUnknown},
	{"RemoveFencesRunningFire", testRemoveFences},
	{"PruneDropsEmptyTombstones", testPruneTombstones},
	{"Groups", testGroups},
}

const cronC = "30 * * * * *"

func (e *env) override(name, cron string, next time.Time) repository.Task {
	e.t.Helper()
	t, err := e.s.Reschedule(e.ctx, e.g, name, cron, []time.Time{next})
	if err != nil {
		e.t.Fatalf("Reschedule(%q, %q): %v", name, cron, err)
	}
	return t
}

func (e *env) remove(name string, o repository.Removal) []repository.Task {
	e.t.Helper()
	ts, err := e.s.RemoveTask(e.ctx, e.g, name, o)
	if err != nil {
		e.t.Fatalf("RemoveTask(%q, %+v): %v", name, o, err)
	}
	return ts
}

func (e *env) gone(what, name string) {
	e.t.Helper()
	if _, err := e.s.Task(e.ctx, e.g, name); !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Errorf("%s: Task(%q) error %v, want ErrTaskNotFound", what, name, err)
	}
	ts, err := e.s.Tasks(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, t := range ts {
		if t.Name == name {
			e.t.Errorf("%s: Tasks lists %q: %+v", what, name, t)
		}
	}
}

func testInsertCodeCron(e *env) {
	got := e.upsert(def("job", e.now()))[0]
	if got.CodeCron != cronA || got.Cron != cronA || got.Overridden() || !got.StaleSince.IsZero() {
		e.t.Fatalf("new row: cron %q code %q overridden %v stale %v", got.Cron, got.CodeCron, got.OverriddenAt, got.StaleSince)
	}
}

func testOverrideSurvives(e *env) {
	n := e.now()
	e.upsert(def("job", n.Add(time.Minute)))
	before := e.now()
	over := e.override("job", cronB, n.Add(time.Hour))
	if over.Cron != cronB || over.CodeCron != cronA || !over.Overridden() {
		e.t.Fatalf("after Reschedule: cron %q code %q overridden at %v", over.Cron, over.CodeCron, over.OverriddenAt)
	}
	e.within("OverriddenAt", over.OverriddenAt, before, e.now())
	// Every replica restarting with unchanged code registers cronA again.
	for range 3 {
		got := e.upsert(def("job", e.now().Add(time.Second)))[0]
		e.sameTask("registration of the same code cron leaves the override", got, over)
	}
}

func testOverrideYields(e *env) {
	n := e.now()
	e.upsert(def("job", n.Add(time.Minute)), def("back", n.Add(time.Minute)))
	over := e.override("job", cronB, n.Add(time.Hour))
	next := n.Add(2 * time.Minute)
	got := e.upsert(repository.TaskDef{Name: "job", Cron: cronC, NextStartTime: next})[0]
	if got.Cron != cronC || got.CodeCron != cronC || got.Overridden() || !got.NextStartTime.Equal(micro(next)) {
		e.t.Errorf("new code cron: cron %q code %q overridden %v next %v; want %q, not overridden, next %v",
			got.Cron, got.CodeCron, got.OverriddenAt, got.NextStartTime, cronC, micro(next))
	}
	if got.Version != over.Version+1 {
		e.t.Errorf("version %d, want %d", got.Version, over.Version+1)
	}
	// New code that adopts the operator's cron ends the override too.
	e.override("back", cronB, n.Add(time.Hour))
	got = e.upsert(repository.TaskDef{Name: "back", Cron: cronB, NextStartTime: next})[0]
	if got.Cron != cronB || got.CodeCron != cronB || got.Overridden() {
		e.t.Errorf("code adopting the override: cron %q code %q overridden %v", got.Cron, got.CodeCron, got.OverriddenAt)
	}
}

func testRescheduleToCodeCron(e *env) {
	n := e.now()
	e.upsert(def("job", n.Add(time.Minute)))
	e.override("job", cronB, n.Add(time.Hour))
	got := e.override("job", cronA, n.Add(time.Second))
	if got.Cron != cronA || got.Overridden() {
		e.t.Fatalf("back to the code's cron: cron %q overridden at %v", got.Cron, got.OverriddenAt)
	}
	e.sameTask("then registrations change nothing", e.upsert(def("job", n.Add(time.Minute)))[0], got)
}

func testTimezoneClearsOverride(e *env) {
	n := e.now()
	e.upsert(def("job", n.Add(time.Minute)))
	e.override("job", cronB, n.Add(time.Hour))
	d := def("job", n.Add(3*time.Minute))
	d.Options.Timezone = "Europe/Paris"
	got := e.upsert(d)[0]
	if got.Cron != cronA || got.Overridden() || !got.NextStartTime.Equal(micro(d.NextStartTime)) {
		e.t.Errorf("time zone changed in code: cron %q overridden %v next %v", got.Cron, got.OverriddenAt, got.NextStartTime)
	}
}

func testPauseSurvives(e *env) {
	n := e.now()
	e.upsert(def("job", n.Add(time.Minute)))
	paused, err := e.s.Pause(e.ctx, e.g, "job")
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameTask("same code: untouched", e.upsert(def("job", n.Add(time.Second)))[0], paused)
	got := e.upsert(repository.TaskDef{Name: "job", Cron: cronB, NextStartTime: n.Add(time.Hour)})[0]
	if got.Status != repository.TaskPaused || !got.Paused || got.Cron != cronB {
		e.t.Errorf("new code cron on a paused task: status %s paused %v cron %q; want still paused, cron %q", got.Status, got.Paused, got.Cron, cronB)
	}
}

func staleOf(ts []repository.Task, name string) time.Time {
	for _, t := range ts {
		if t.Name == name {
			return t.StaleSince
		}
	}
	return time.Time{}
}

func testMarkStale(e *env) {
	n := e.now()
	ts := e.upsert(def("a", n.Add(time.Minute)), def("b", n.Add(time.Minute)))
	e.upsertIn(e.other(), def("a", n.Add(time.Minute)))
	before := e.now()
	got, err := e.s.MarkStale(e.ctx, e.g, []string{"a", "ghost"})
	if err != nil {
		e.t.Fatal(err)
	}
	if !slices.Equal(taskIDs(got), taskIDs(ts)) {
		e.t.Fatalf("MarkStale returned %v, want every task %v", taskIDs(got), taskIDs(ts))
	}
	first := staleOf(got, "a")
	e.within("StaleSince of a", first, before, e.now())
	if !staleOf(got, "b").IsZero() || got[0].Version != ts[0].Version {
		e.t.Errorf("b stale since %v; a version %d -> %d", staleOf(got, "b"), ts[0].Version, got[0].Version)
	}
	e.sameTask("read back", e.task("a"), got[0])
	if other := e.taskIn(e.other(), "a"); !other.StaleSince.IsZero() {
		e.t.Errorf("other group marked: %v", other.StaleSince)
	}
	e.waitPast(first)
	got, _ = e.s.MarkStale(e.ctx, e.g, []string{"a", "b"})
	if !staleOf(got, "a").Equal(first) || staleOf(got, "b").IsZero() {
		e.t.Errorf("second mark: a %v (want kept %v), b %v", staleOf(got, "a"), first, staleOf(got, "b"))
	}
	got, _ = e.s.MarkStale(e.ctx, e.g, nil)
	if !staleOf(got, "a").IsZero() || !staleOf(got, "b").IsZero() {
		e.t.Errorf("cleared: a %v b %v", staleOf(got, "a"), staleOf(got, "b"))
	}
}

func testUpsertClearsStale(e *env) {
	n := e.now()
	t := e.upsert(def("a", n.Add(time.Minute)))[0]
	if _, err := e.s.MarkStale(e.ctx, e.g, []string{"a"}); err != nil {
		e.t.Fatal(err)
	}
	got := e.upsert(def("a", n.Add(time.Minute)))[0]
	if !got.StaleSince.IsZero() || got.Version != t.Version {
		e.t.Errorf("registered again: stale since %v, version %d (want cleared, %d)", got.StaleSince, got.Version, t.Version)
	}
}

func testRemoveDrops(e *env) {
	n := e.now()
	e.upsert(def("root", n), repository.TaskDef{Name: "kid", Parent: "root", NextStartTime: n},
		repository.TaskDef{Name: "grandkid", Parent: "kid", NextStartTime: n}, def("other", n))
	e.upsertIn(e.other(), def("root", n))
	node := e.node("n")
	root := e.claim(node.ID, e.task("root"))[0]
	e.runOnce(root, repository.ExecSucceeded)
	got := e.remove("root", repository.Removal{})
	if names := taskNames(got); !slices.Equal(names, []string{"root", "kid", "grandkid"}) {
		e.t.Fatalf("removed %v, want root, kid, grandkid", names)
	}
	for _, name := range []string{"root", "kid", "grandkid"} {
		e.gone("removed", name)
		if _, err := e.s.History(e.ctx, e.g, name, repository.HistoryFilter{}); !errors.Is(err, repository.ErrTaskNotFound) {
			e.t.Errorf("History(%q) after removal: %v, want ErrTaskNotFound", name, err)
		}
	}
	e.task("other")
	e.taskIn(e.other(), "root")
	// The name can be registered again, as a new task.
	again := e.upsert(def("root", n))[0]
	if again.Version != 1 || again.ID == root.ID {
		e.t.Errorf("registered again: %+v, want a new row", again)
	}
}

func testRemoveKeepsHistory(e *env) {
	n := e.now()
	e.upsert(def("root", n), repository.TaskDef{Name: "kid", Parent: "root", NextStartTime: n})
	node := e.node("n")
	root := e.claim(node.ID, e.task("root"))[0]
	_, x := e.runOnce(root, repository.ExecSucceeded)
	e.override("root", cronB, n.Add(time.Hour))
	if _, err := e.s.Pause(e.ctx, e.g, "root"); err != nil {
		e.t.Fatal(err)
	}
	got := e.remove("root", repository.Removal{KeepHistory: true})
	if len(got) != 2 || got[0].Status != repository.TaskRemoved || got[0].NodeID != 0 || got[0].Paused {
		e.t.Fatalf("removed rows %+v: want root as a tombstone first", got)
	}
	e.gone("tombstone", "root")
	e.gone("no history: deleted", "kid")
	if xs := e.history("root", repository.HistoryFilter{}); len(xs) != 1 || xs[0].ID != x || xs[0].TaskName != "root" {
		e.t.Errorf("history of a removed task: %+v, want execution %d", xs, x)
	}
	if _, err := e.s.History(e.ctx, e.g, "kid", repository.HistoryFilter{}); !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Errorf("History(kid): %v, want ErrTaskNotFound", err)
	}
	for what, op := range map[string]controlOp{"Pause": e.s.Pause, "Resume": e.s.Resume, "Trigger": e.triggerOp} {
		if _, err := op(e.ctx, e.g, "root"); !errors.Is(err, repository.ErrTaskNotFound) {
			e.t.Errorf("%s of a removed task: %v, want ErrTaskNotFound", what, err)
		}
	}
	if _, err := e.s.Reschedule(e.ctx, e.g, "root", cronA, []time.Time{n}); !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Errorf("Reschedule of a removed task: %v, want ErrTaskNotFound", err)
	}
	if ids, _ := e.due(time.Hour, 0, "root"); len(ids) != 0 {
		e.t.Errorf("a removed task is due: %v", ids)
	}
	if _, err := e.s.RemoveTask(e.ctx, e.g, "root", repository.Removal{}); !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Errorf("removing a tombstone: %v, want ErrTaskNotFound", err)
	}
	// Registered again: the same row, revived as new, its history kept.
	next := n.Add(time.Minute)
	back := e.upsert(repository.TaskDef{Name: "root", Cron: cronC, NextStartTime: next},
		repository.TaskDef{Name: "kid", Parent: "root", NextStartTime: n})[0]
	if back.ID != root.ID || back.Status != repository.TaskPending || back.Paused || back.Overridden() ||
		back.Cron != cronC || back.CodeCron != cronC || back.Version != got[0].Version+1 || !back.NextStartTime.Equal(micro(next)) || back.Attempt != 1 {
		e.t.Errorf("revived row %+v", back)
	}
	if xs := e.history("root", repository.HistoryFilter{}); len(xs) != 1 {
		e.t.Errorf("history after revival: %d runs, want 1", len(xs))
	}
	if ids, _ := e.due(time.Hour, 0, "root"); len(ids) != 1 {
		e.t.Errorf("revived task not due: %v", ids)
	}
}

func testRemoveIfStale(e *env) {
	n := e.now()
	e.upsert(def("a", n), def("b", n))
	if got := e.remove("a", repository.Removal{StaleBefore: e.now()}); len(got) != 0 {
		e.t.Fatalf("removed a task never marked stale: %+v", got)
	}
	marked, err := e.s.MarkStale(e.ctx, e.g, []string{"a", "b"})
	if err != nil {
		e.t.Fatal(err)
	}
	since := staleOf(marked, "a")
	if got := e.remove("a", repository.Removal{StaleBefore: since.Add(-time.Millisecond)}); len(got) != 0 {
		e.t.Fatalf("removed a task stale for less than asked: %+v", got)
	}
	// A node registers b again (clearing the mark) before the prune acts.
	e.upsert(def("b", n))
	if got := e.remove("b", repository.Removal{StaleBefore: e.now()}); len(got) != 0 {
		e.t.Fatalf("removed a task registered again: %+v", got)
	}
	e.task("b")
	if got := e.remove("a", repository.Removal{StaleBefore: since}); len(got) != 1 || got[0].Name != "a" {
		e.t.Fatalf("stale task not removed: %+v", got)
	}
	e.gone("pruned", "a")
}

func testRemoveUnknown(e *env) {
	_, err := e.s.RemoveTask(e.ctx, e.g, "ghost", repository.Removal{})
	e.wantErr("RemoveTask(ghost)", err, repository.ErrTaskNotFound, "ghost")
}

func testRemoveFences(e *env) {
	node := e.node("n")
	t := e.claimed("job", node.ID)
	x := e.start(t)
	e.remove("job", repository.Removal{KeepHistory: true})
	r := e.finish(keep(t, x.ID, repository.ExecSucceeded))[0]
	if !errors.Is(r.Err, repository.ErrClaimLost) {
		e.t.Fatalf("finish after removal: %v, want ErrClaimLost", r.Err)
	}
	if xs := e.history("job", repository.HistoryFilter{}); len(xs) != 1 || xs[0].Status != repository.ExecFenced {
		e.t.Errorf("history: %+v, want one fenced run", xs)
	}
	if held, err := e.s.HeldBy(e.ctx, node.ID); err != nil || len(held) != 0 {
		e.t.Errorf("HeldBy after removal: %v, %v", taskIDs(held), err)
	}
}

func testPruneTombstones(e *env) {
	node := e.node("n")
	t := e.claimed("job", node.ID)
	e.runOnce(t, repository.ExecSucceeded)
	e.remove("job", repository.Removal{KeepHistory: true})
	e.history("job", repository.HistoryFilter{})
	if _, err := e.s.PruneHistory(e.ctx, e.g, 0, 1); err != nil { // the newest run stays
		e.t.Fatal(err)
	}
	if xs := e.history("job", repository.HistoryFilter{}); len(xs) != 1 {
		e.t.Fatalf("history pruned to %d, want 1", len(xs))
	}
	e.waitPast(e.now().Add(2 * time.Millisecond))
	if _, err := e.s.PruneHistory(e.ctx, e.g, time.Millisecond, 0); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.s.History(e.ctx, e.g, "job", repository.HistoryFilter{}); !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Errorf("tombstone without history kept: %v", err)
	}
}

// threeGroups makes e's group with a task, the other group with a node,
// and a group whose only task is removed, which it names.
func (e *env) threeGroups() string {
	e.t.Helper()
	n := e.now()
	e.upsert(def("a", n))
	e.nodeIn(e.other(), "n")
	gone := e.g + "-gone"
	e.upsertIn(gone, def("x", n))
	if _, err := e.s.RemoveTask(e.ctx, gone, "x", repository.Removal{}); err != nil {
		e.t.Fatal(err)
	}
	return gone
}

func testGroups(e *env) {
	gone := e.threeGroups()
	gs, err := e.s.Groups(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if !slices.Contains(gs, e.g) || !slices.Contains(gs, e.other()) || slices.Contains(gs, gone) || !slices.IsSorted(gs) {
		e.t.Errorf("Groups = %v: want %q and %q, not %q, sorted", gs, e.g, e.other(), gone)
	}
}

func taskNames(ts []repository.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}
