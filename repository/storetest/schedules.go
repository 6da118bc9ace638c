package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Schedules created at runtime (ScheduleStore), the handler kinds
// (HandlerStore), and what they change elsewhere: due tasks by handler,
// triggers with arguments, the arguments and revision of each run, the
// revision a finish ran, staleness.
var scheduleCases = []testCase{
	{"CreateBatch", testCreateBatch},
	{"CreateTakenName", testCreateTaken},
	{"CreateRevivesRemoved", testCreateRevives},
	{"CreateOptionSets", testCreateOptionSets},
	{"CreateTakenLate", testCreateTakenLate},
	{"CreateRevivesInBatch", testCreateRevivesInBatch},
	{"CreateRacesForAName", testCreateRace},
	{"UpdatePending", testUpdatePending},
	{"UpdateDoing", testUpdateDoing},
	{"UpdateNotDynamic", testUpdateNotDynamic},
	{"UpsertRefusesSchedule", testUpsertRefusesSchedule},
	{"DueByHandler", testDueByHandler},
	{"TriggerArgs", testTriggerArgs},
	{"TriggerArgsWhileDoing", testTriggerArgsDoing},
	{"ExecutionArgs", testExecutionArgs},
	{"Handlers", testHandlers},
	{"NeverStale", testSchedulesNeverStale},
}

// Arguments in the form jsonb gives them back, so that rows compare as
// they are; argsOther is written in another form and compared as JSON.
const (
	argsA     = `{"to": "ops"}`
	argsB     = `{"to": "dev"}`
	argsOther = `{"b":[1,2],  "a":{"x":true}}`
)

// sched is a pending schedule of handler kind due at next.
func sched(name, kind string, next time.Time) repository.ScheduleDef {
	return repository.ScheduleDef{Name: name, Handler: kind, Cron: cronA, Args: argsA, NextStartTime: next}
}

func (e *env) create(defs ...repository.ScheduleDef) []repository.Task {
	e.t.Helper()
	ts, err := e.s.CreateSchedules(e.ctx, e.g, defs)
	if err != nil {
		e.t.Fatalf("CreateSchedules: %v", err)
	}
	if len(ts) != len(defs) {
		e.t.Fatalf("CreateSchedules returned %d rows for %d defs", len(ts), len(defs))
	}
	for i, d := range defs {
		if ts[i].Name != d.Name {
			e.t.Fatalf("CreateSchedules row %d = %q, want %q (defs order)", i, ts[i].Name, d.Name)
		}
		e.sameTask("CreateSchedules returns the stored row", ts[i], e.task(d.Name))
	}
	return ts
}

func (e *env) update(name string, d repository.ScheduleDef) repository.Task {
	e.t.Helper()
	t, err := e.s.UpdateSchedule(e.ctx, e.g, name, d)
	if err != nil {
		e.t.Fatalf("UpdateSchedule(%q): %v", name, err)
	}
	e.sameTask("UpdateSchedule returns the stored row", t, e.task(name))
	return t
}

// sameJSON fails unless got and want are both "" or the same JSON value.
func (e *env) sameJSON(what, got, want string) {
	e.t.Helper()
	if got == "" || want == "" {
		if got != want {
			e.t.Errorf("%s = %q, want %q", what, got, want)
		}
		return
	}
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		e.t.Errorf("%s = %q: not JSON: %v", what, got, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		e.t.Fatalf("%s: want %q is not JSON: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		e.t.Errorf("%s = %s, want %s", what, got, want)
	}
}

// A batch is written as given: pending, paused or finished root rows,
// Dynamic, revision 1, the code's cron the one given; one audit entry per
// row; nothing in another group.
func testCreateBatch(e *env) {
	n := e.now()
	next := n.Add(time.Hour + 1234567)
	opts := repository.TaskOptions{Timezone: "Europe/Paris", MaxRetries: 3, Timeout: time.Minute}
	defs := []repository.ScheduleDef{
		{Name: "mail-ops", Handler: "mailer", Cron: cronA, Args: argsA, Options: opts, NextStartTime: next},
		{Name: "mail-dev", Handler: "mailer", Cron: cronB, Args: argsOther, NextStartTime: next, Paused: true},
		{Name: "once", Handler: "report", Cron: cronB, Finished: true},
		{Name: "bare", Handler: "report", Cron: cronA, NextStartTime: next},
	}
	for i := range 200 { // enough to be a batch
		defs = append(defs, sched(fmt.Sprintf("bulk-%03d", i), "bulk", next))
	}
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor})
	before := e.now()
	ts, err := e.s.CreateSchedules(ctx, e.g, defs)
	after := e.now()
	if err != nil {
		e.t.Fatalf("CreateSchedules: %v", err)
	}
	if len(ts) != len(defs) {
		e.t.Fatalf("CreateSchedules returned %d rows for %d", len(ts), len(defs))
	}
	ids := map[repository.TaskID]bool{}
	for i, d := range defs {
		got := ts[i]
		if got.ID <= 0 || ids[got.ID] {
			e.t.Fatalf("row %q: id %d, want a new positive id", d.Name, got.ID)
		}
		ids[got.ID] = true
		e.within("created_at of "+d.Name, got.CreatedAt, before, after)
		want := repository.Task{
			ID: got.ID, Group: e.g, Name: d.Name, Handler: d.Handler, Dynamic: true,
			Cron: d.Cron, CodeCron: d.Cron, Args: got.Args, Options: d.Options,
			Status: repository.TaskPending, Version: 1, Revision: 1, Attempt: 1,
			NextStartTime: micro(d.NextStartTime), CreatedAt: got.CreatedAt, UpdatedAt: got.CreatedAt,
		}
		switch {
		case d.Finished:
			want.Status = repository.TaskFinished
			want.NextStartTime = got.NextStartTime // no fire: not specified
		case d.Paused:
			want.Status, want.Paused = repository.TaskPaused, true
		}
		e.sameTask("created "+d.Name, got, want)
		e.sameJSON("args of "+d.Name, got.Args, d.Args)
		if i < 4 {
			e.sameTask("Task("+d.Name+")", e.task(d.Name), got)
		}
	}
	all, err := e.s.Tasks(e.ctx, e.g)
	if err != nil || len(all) != len(defs) {
		e.t.Fatalf("Tasks = %d rows, %v; want %d", len(all), err, len(defs))
	}
	got := e.audit(repository.AuditFilter{Limit: 1000})
	if len(got) != len(defs) {
		e.t.Fatalf("Audit = %d entries, want one per created row (%d)", len(got), len(defs))
	}
	byTask := map[string]repository.AuditEntry{}
	for _, a := range got {
		byTask[a.Task] = a
	}
	for _, d := range defs[:4] {
		a := byTask[d.Name]
		if a.Action != "create" || a.Actor != auditActor || a.Detail != "handler "+d.Handler+" cron "+d.Cron {
			e.t.Errorf("audit entry of %q = %+v, want create by %+v, detail naming handler and cron", d.Name, a, auditActor)
		}
		e.within("audit At", a.At, before, after)
	}
	if other, err := e.s.Tasks(e.ctx, e.other()); err != nil || len(other) != 0 {
		e.t.Errorf("Tasks of another group = %d rows, %v", len(other), err)
	}
	if ts, err := e.s.CreateSchedules(e.ctx, e.g, nil); err != nil || len(ts) != 0 {
		e.t.Errorf("CreateSchedules(nil) = %v, %v; want nothing", ts, err)
	}
}

// A name taken by a registered task or a schedule fails the whole batch
// with ErrTaskExists naming it; nothing is written, nothing audited.
func testCreateTaken(e *env) {
	n := e.now()
	reg := e.pending("registered")
	e.create(sched("existing", "mailer", n))
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor, Action: "create"})
	for _, taken := range []string{"registered", "existing"} {
		_, err := e.s.CreateSchedules(ctx, e.g, []repository.ScheduleDef{
			sched("fresh-1", "mailer", n), sched(taken, "mailer", n), sched("fresh-2", "mailer", n),
		})
		e.wantErr("CreateSchedules over "+taken, err, repository.ErrTaskExists, taken)
		e.gone("after the refused batch", "fresh-1")
		e.gone("after the refused batch", "fresh-2")
	}
	e.sameTask("the registered task is untouched", e.task("registered"), reg)
	_, err := e.s.CreateSchedules(e.ctx, e.g, []repository.ScheduleDef{sched("twice", "m", n), sched("twice", "m", n)})
	if err == nil {
		e.t.Errorf("CreateSchedules with one name twice: no error")
	}
	e.gone("after a batch naming one task twice", "twice")
	_, err = e.s.CreateSchedules(e.ctx, e.g, []repository.ScheduleDef{
		sched("ok", "m", n), {Name: "bad", Handler: "m", Cron: cronA, Args: "{not json", NextStartTime: n},
	})
	if err == nil {
		e.t.Errorf("CreateSchedules with arguments that are not JSON: no error")
	}
	e.gone("after a batch with bad arguments", "ok")
	if got := e.audit(repository.AuditFilter{}); len(got) != 0 {
		e.t.Errorf("refused batches were audited: %+v", got)
	}
	// The same name in another group is free.
	if _, err := e.s.CreateSchedules(e.ctx, e.other(), []repository.ScheduleDef{sched("existing", "m", n)}); err != nil {
		e.t.Errorf("CreateSchedules in another group: %v", err)
	}
}

// A removed row whose history was kept is revived under its id, its
// history still readable: a registered task's tombstone becomes a
// schedule too.
func testCreateRevives(e *env) {
	n := e.now()
	node := e.node("n")
	first := e.create(sched("s", "mailer", n.Add(-time.Second)))[0]
	held := e.claim(node.ID, first)[0]
	x := e.start(held)
	e.finishHeld(repository.Finish{Claim: held.Claim(), Revision: held.Revision, ExecutionID: x.ID,
		Status: repository.ExecSucceeded, Next: n.Add(time.Hour), NextAttempt: 1, Cron: held.Cron})
	e.pending("was-registered")
	reg := e.claim(node.ID, e.task("was-registered"))[0]
	e.runOnce(reg, repository.ExecFailed)
	tomb := e.remove("s", repository.Removal{KeepHistory: true})[0]
	regTomb := e.remove("was-registered", repository.Removal{KeepHistory: true})[0]
	if tomb.Status != repository.TaskRemoved || regTomb.Status != repository.TaskRemoved {
		e.t.Fatalf("tombstones %+v, %+v", tomb, regTomb)
	}

	next := n.Add(2 * time.Hour)
	defs := []repository.ScheduleDef{
		{Name: "s", Handler: "pager", Cron: cronB, Args: argsB, NextStartTime: next},
		{Name: "was-registered", Handler: "mailer", Cron: cronA, NextStartTime: next, Paused: true},
		sched("new", "mailer", next),
	}
	ts := e.create(defs...)
	for i, old := range []repository.Task{tomb, regTomb} {
		got := ts[i]
		want := old
		want.Handler, want.Dynamic, want.Cron, want.CodeCron = defs[i].Handler, true, defs[i].Cron, defs[i].Cron
		want.Args, want.FireArgs, want.Options = defs[i].Args, "", defs[i].Options
		want.Status, want.Paused, want.NextStartTime = repository.TaskPending, false, micro(next)
		if defs[i].Paused {
			want.Status, want.Paused = repository.TaskPaused, true
		}
		want.Version, want.Revision, want.Attempt = old.Version+1, 1, 1
		want.NodeID, want.ParentID, want.TriggerRequested, want.FireKind = 0, 0, false, ""
		want.OverriddenAt, want.StaleSince, want.UpdatedAt = time.Time{}, time.Time{}, got.UpdatedAt
		e.sameTask("revived "+old.Name, got, want)
	}
	if xs := e.history("s", repository.HistoryFilter{}); len(xs) != 1 || xs[0].ID != x.ID {
		e.t.Errorf("history of the revived schedule = %+v, want its run %d", xs, x.ID)
	}
	if !ts[2].Dynamic || ts[2].ID == tomb.ID || ts[2].ID == regTomb.ID {
		e.t.Errorf("new row %+v", ts[2])
	}
}

// An update of a pending, paused or finished schedule: the new
// definition and next fire, version+1, revision+1; a finished one becomes
// pending, a paused one stays paused, a triggered fire gives way.
func testUpdatePending(e *env) {
	n := e.now()
	fin := sched("finished", "mailer", time.Time{})
	fin.Finished = true
	e.create(sched("pending", "mailer", n.Add(time.Hour)), sched("parked", "mailer", n.Add(time.Hour)), fin,
		sched("triggered", "mailer", n.Add(time.Hour)))
	parked := e.do("Pause", e.s.Pause, "parked")
	trig, err := e.s.Trigger(e.ctx, e.g, "triggered", argsB)
	if err != nil || trig.FireArgs == "" || trig.FireKind != repository.RunManual {
		e.t.Fatalf("Trigger with arguments = %+v, %v", trig, err)
	}
	rows := map[string]repository.Task{"pending": e.task("pending"), "parked": parked, "finished": e.task("finished"), "triggered": trig}
	next := n.Add(3*time.Hour + 4321)
	opts := repository.TaskOptions{MaxRetries: 5}
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor})
	for _, name := range []string{"pending", "parked", "finished", "triggered"} {
		d := repository.ScheduleDef{Handler: "pager", Cron: cronB, Args: argsB, Options: opts, NextStartTime: next, Paused: false}
		got, err := e.s.UpdateSchedule(ctx, e.g, name, d)
		if err != nil {
			e.t.Fatalf("UpdateSchedule(%q): %v", name, err)
		}
		e.sameTask("UpdateSchedule returns the stored row", got, e.task(name))
		want := rows[name]
		want.Handler, want.Cron, want.CodeCron, want.Args, want.Options = "pager", cronB, cronB, argsB, opts
		want.NextStartTime, want.UpdatedAt = micro(next), got.UpdatedAt
		want.Version, want.Revision = want.Version+1, want.Revision+1
		want.Attempt, want.FireKind, want.FireArgs = 1, "", ""
		if name != "parked" {
			want.Status = repository.TaskPending // a finished one too
		}
		e.sameTask("updated "+name, got, want)
	}
	if ids, _ := e.due(4*time.Hour, 0, "pager"); len(ids) != 3 {
		e.t.Errorf("due by the new handler = %v, want the 3 unpaused rows", ids)
	}
	got := e.audit(repository.AuditFilter{})
	if len(got) != 4 || got[0].Action != "update" || got[0].Task != "triggered" || got[0].Detail != "handler pager cron "+cronB {
		e.t.Errorf("Audit = %+v, want 4 update entries, the newest of triggered naming handler and cron", got)
	}
}

// An update while a fire runs does not fence it: the version stays. The
// fire's finish, which ran the older revision, does not keep the claim
// and leaves the updated next fire; a finish of the current revision
// keeps as asked.
func testUpdateDoing(e *env) {
	n := e.now()
	node := e.node("n")
	held := e.claim(node.ID, e.create(sched("s", "mailer", n.Add(-time.Second)))[0])[0]
	x := e.start(held)
	next := n.Add(5 * time.Hour)
	got := e.update("s", repository.ScheduleDef{Handler: "mailer", Cron: cronA, Args: argsB, NextStartTime: next})
	want := held
	want.Args, want.NextStartTime, want.Revision, want.UpdatedAt = argsB, micro(next), held.Revision+1, got.UpdatedAt
	e.sameTask("updated doing row: same version, new revision", got, want)

	res := e.finishHeld(repository.Finish{Claim: held.Claim(), Revision: held.Revision, ExecutionID: x.ID,
		Status: repository.ExecSucceeded, Next: n.Add(time.Minute), NextAttempt: 1, Cron: held.Cron, Keep: true})
	if res.Status != repository.TaskPending || res.NodeID != 0 || !res.NextStartTime.Equal(micro(next)) || res.Attempt != 1 {
		e.t.Errorf("finish of the older revision = %+v, want pending at the updated next %v", res, micro(next))
	}

	// Claimed again (the new revision), its finish keeps as asked.
	again := e.claim(node.ID, res)[0]
	if again.Revision != got.Revision {
		e.t.Fatalf("claimed row revision %d, want %d", again.Revision, got.Revision)
	}
	x2 := e.start(again)
	kept := e.finishHeld(repository.Finish{Claim: again.Claim(), Revision: again.Revision, ExecutionID: x2.ID,
		Status: repository.ExecSucceeded, Next: next.Add(time.Minute), NextAttempt: 1, Cron: again.Cron, Keep: true})
	if kept.Status != repository.TaskDoing || kept.NodeID != node.ID || !kept.NextStartTime.Equal(micro(next.Add(time.Minute))) {
		e.t.Errorf("finish of the current revision = %+v, want doing at %v", kept, micro(next.Add(time.Minute)))
	}
}

// UpdateSchedule names a schedule: a registered task is ErrNotDynamic, a
// missing or removed one ErrTaskNotFound; neither is changed or audited.
func testUpdateNotDynamic(e *env) {
	n := e.now()
	reg := e.pending("registered")
	e.create(sched("gone", "m", n))
	e.remove("gone", repository.Removal{})
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor, Action: "update"})
	d := sched("", "m", n.Add(time.Hour))
	_, err := e.s.UpdateSchedule(ctx, e.g, "registered", d)
	e.wantErr("UpdateSchedule of a registered task", err, repository.ErrNotDynamic, "registered")
	if errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Errorf("UpdateSchedule of a registered task: %v also matches ErrTaskNotFound", err)
	}
	e.sameTask("registered task untouched", e.task("registered"), reg)
	for _, name := range []string{"ghost", "gone"} {
		_, err := e.s.UpdateSchedule(ctx, e.g, name, d)
		e.wantErr("UpdateSchedule of "+name, err, repository.ErrTaskNotFound, name)
	}
	_, err = e.s.UpdateSchedule(ctx, e.other(), "registered", d)
	e.wantErr("UpdateSchedule in another group", err, repository.ErrTaskNotFound, "registered")
	if got := e.audit(repository.AuditFilter{}); len(got) != 0 {
		e.t.Errorf("failed updates were audited: %+v", got)
	}
}

// A registration naming a schedule fails whole with ErrTaskExists; once
// the schedule is removed, its tombstone is revived as a registered task.
func testUpsertRefusesSchedule(e *env) {
	n := e.now()
	s := e.create(sched("s", "mailer", n))[0]
	_, err := e.s.UpsertTasks(e.ctx, e.g, []repository.TaskDef{def("x", n), def("s", n)})
	e.wantErr("UpsertTasks over a schedule", err, repository.ErrTaskExists, "s")
	e.gone("after the refused registration", "x")
	e.sameTask("the schedule is untouched", e.task("s"), s)

	node := e.node("n")
	held := e.claim(node.ID, s)[0]
	e.runOnce(held, repository.ExecSucceeded)
	e.remove("s", repository.Removal{KeepHistory: true})
	got := e.upsert(def("s", n.Add(time.Hour)))[0]
	if got.ID != s.ID || got.Dynamic || got.Handler != "s" || got.Args != "" || got.FireArgs != "" ||
		got.Status != repository.TaskPending || got.Cron != cronA {
		e.t.Errorf("registration over the schedule's tombstone = %+v, want a registered task under id %d", got, s.ID)
	}
}

// DueTasks selects by handler: a schedule by its kind, not its name; a
// registered task by its name, which is its handler.
func testDueByHandler(e *env) {
	n := e.now()
	past := n.Add(-time.Second)
	reg := e.upsert(def("mailer", past))[0]
	ts := e.create(sched("nightly", "mailer", past), sched("hourly", "pager", past), sched("later", "mailer", n.Add(time.Hour)))
	if reg.Handler != "mailer" {
		e.t.Errorf("registered task handler = %q, want its name", reg.Handler)
	}
	got, _ := e.due(0, 0, "nightly", "hourly")
	e.wantDue("by schedule names", got)
	got, _ = e.due(0, 0, "mailer")
	want := []repository.Task{reg, ts[0]}
	if ts[0].ID < reg.ID {
		want = []repository.Task{ts[0], reg}
	}
	e.wantDue("by handler mailer", got, want...)
	got, _ = e.due(2*time.Hour, 0, "pager", "mailer", "pager")
	if len(got) != 4 {
		e.t.Errorf("every handler, a long window = %v, want 4 rows", got)
	}
}

// A trigger with arguments on a pending task: its fire runs them
// (RunArgs); its finish clears them.
func testTriggerArgs(e *env) {
	n := e.now()
	node := e.node("n")
	e.create(sched("s", "mailer", n.Add(time.Hour)))
	got, err := e.s.Trigger(e.ctx, e.g, "s", argsOther)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameTask("Trigger returns the stored row", got, e.task("s"))
	e.sameJSON("FireArgs", got.FireArgs, argsOther)
	e.sameJSON("RunArgs", got.RunArgs(), argsOther)
	if got.FireKind != repository.RunManual || got.Args != argsA {
		e.t.Errorf("triggered row %+v: want manual, schedule args kept", got)
	}
	if _, err := e.s.Trigger(e.ctx, e.g, "s", "nope{"); err == nil {
		e.t.Errorf("Trigger with arguments that are not JSON: no error")
	}
	e.sameTask("a refused trigger changes nothing", e.task("s"), got)
	held := e.claim(node.ID, got)[0]
	if held.FireArgs != got.FireArgs {
		e.t.Errorf("claimed row FireArgs = %q, want %q (a claim keeps them)", held.FireArgs, got.FireArgs)
	}
	x := e.start(held)
	res := e.finishHeld(keep(held, x.ID, repository.ExecSucceeded))
	if res.FireArgs != "" || res.RunArgs() != argsA || res.FireKind != "" {
		e.t.Errorf("after the manual fire's finish: %+v, want no FireArgs, RunArgs the schedule's", res)
	}
	// A registered task takes arguments too.
	e.pending("reg")
	r, err := e.s.Trigger(e.ctx, e.g, "reg", argsB)
	if err != nil || r.FireArgs != argsB || r.Args != "" {
		e.t.Errorf("Trigger of a registered task with arguments = %+v, %v", r, err)
	}
}

// A trigger with arguments while a fire runs: the finish of that fire
// schedules the extra fire with them; that fire's own finish clears them.
func testTriggerArgsDoing(e *env) {
	n := e.now()
	node := e.node("n")
	held := e.claim(node.ID, e.create(sched("s", "mailer", n.Add(-time.Second)))[0])[0]
	x := e.start(held)
	got, err := e.s.Trigger(e.ctx, e.g, "s", argsB)
	if err != nil {
		e.t.Fatal(err)
	}
	want := held
	want.TriggerRequested, want.FireArgs, want.UpdatedAt = true, argsB, got.UpdatedAt
	e.sameTask("triggered doing row", got, want)

	res := e.finishHeld(keep(got, x.ID, repository.ExecSucceeded))
	if res.Status != repository.TaskPending || res.FireKind != repository.RunManual || res.FireArgs != argsB || res.TriggerRequested {
		e.t.Fatalf("finish of the running fire = %+v, want the extra manual fire pending with its arguments", res)
	}
	extra := e.claim(node.ID, res)[0]
	if extra.RunArgs() != argsB {
		e.t.Errorf("extra fire RunArgs = %q, want %q", extra.RunArgs(), argsB)
	}
	x2 := e.start(extra)
	done := e.finishHeld(keep(extra, x2.ID, repository.ExecSucceeded))
	if done.FireArgs != "" || done.FireKind != "" || done.RunArgs() != argsA {
		e.t.Errorf("finish of the extra fire = %+v, want its arguments cleared", done)
	}
}

// Each run records the arguments and revision it ran with, whichever way
// it was recorded: a start, a batch of starts, a run appended at its
// finish; History gives them back.
func testExecutionArgs(e *env) {
	n := e.now()
	node := e.node("n")
	ts := e.create(sched("one", "m", n.Add(-time.Second)), sched("two", "m", n.Add(-time.Second)),
		sched("three", "m", n.Add(-time.Second)), sched("bare", "m", n.Add(-time.Second)))
	held := e.claim(node.ID, ts...)
	x1, err := e.s.StartExecution(e.ctx, held[0].Claim(), repository.Execution{
		ScheduledAt: held[0].NextStartTime, Attempt: 1, Args: argsOther, Revision: 7})
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameJSON("StartExecution args", x1.Args, argsOther)
	if x1.Revision != 7 {
		e.t.Errorf("StartExecution revision = %d, want 7", x1.Revision)
	}
	rs, err := e.s.StartExecutions(e.ctx, []repository.ExecStart{
		{Claim: held[1].Claim(), Execution: repository.Execution{ScheduledAt: held[1].NextStartTime, Attempt: 1, Args: argsB, Revision: 3}},
		{Claim: held[3].Claim(), Execution: repository.Execution{ScheduledAt: held[3].NextStartTime, Attempt: 1}},
	})
	if err != nil || rs[0].Err != nil || rs[1].Err != nil {
		e.t.Fatalf("StartExecutions = %+v, %v", rs, err)
	}
	if rs[0].Execution.Args != argsB || rs[0].Execution.Revision != 3 || rs[1].Execution.Args != "" || rs[1].Execution.Revision != 0 {
		e.t.Errorf("StartExecutions rows = %+v, %+v", rs[0].Execution, rs[1].Execution)
	}
	f := keep(held[2], 0, repository.ExecSucceeded)
	f.Run = &repository.Execution{ScheduledAt: held[2].NextStartTime, Attempt: 1, Kind: repository.RunCron, Args: argsA, Revision: 1}
	e.finishHeld(f)

	for _, c := range []struct {
		name string
		args string
		rev  int64
	}{{"one", argsOther, 7}, {"two", argsB, 3}, {"three", argsA, 1}, {"bare", "", 0}} {
		xs := e.history(c.name, repository.HistoryFilter{})
		if len(xs) != 1 {
			e.t.Errorf("history of %q = %+v, want one run", c.name, xs)
			continue
		}
		e.sameJSON("recorded args of "+c.name, xs[0].Args, c.args)
		if xs[0].Revision != c.rev {
			e.t.Errorf("recorded revision of %q = %d, want %d", c.name, xs[0].Revision, c.rev)
		}
	}
	if _, err := e.s.StartExecution(e.ctx, held[0].Claim(), repository.Execution{
		ScheduledAt: held[0].NextStartTime.Add(time.Second), Attempt: 1, Args: "{"}); err == nil {
		e.t.Errorf("StartExecution with arguments that are not JSON: no error")
	}
}

// Handler kinds are upserted by kind (the newest schema wins) and listed
// by kind, per group.
func testHandlers(e *env) {
	if hs, err := e.s.Handlers(e.ctx, e.g); err != nil || len(hs) != 0 {
		e.t.Fatalf("Handlers of a new group = %+v, %v", hs, err)
	}
	if err := e.s.PublishHandlers(e.ctx, e.g, []repository.HandlerDef{
		{Kind: "report", Schema: json.RawMessage(`{"type": "object"}`)},
		{Kind: "mailer", Schema: json.RawMessage(`{"type":"object","required":["to"]}`)},
	}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.PublishHandlers(e.ctx, e.g, []repository.HandlerDef{
		{Kind: "report", Schema: json.RawMessage(`{"type": "array"}`)},
		{Kind: "Zeta", Schema: json.RawMessage(`true`)},
	}); err != nil {
		e.t.Fatal(err)
	}
	hs, err := e.s.Handlers(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	want := []repository.HandlerDef{
		{Kind: "Zeta", Schema: json.RawMessage(`true`)},
		{Kind: "mailer", Schema: json.RawMessage(`{"type":"object","required":["to"]}`)},
		{Kind: "report", Schema: json.RawMessage(`{"type": "array"}`)},
	}
	if len(hs) != len(want) {
		e.t.Fatalf("Handlers = %+v, want %d kinds", hs, len(want))
	}
	for i, w := range want {
		if hs[i].Kind != w.Kind {
			e.t.Errorf("Handlers[%d] = %q, want %q (sorted by kind)", i, hs[i].Kind, w.Kind)
		}
		e.sameJSON("schema of "+w.Kind, string(hs[i].Schema), string(w.Schema))
	}
	if other, err := e.s.Handlers(e.ctx, e.other()); err != nil || len(other) != 0 {
		e.t.Errorf("Handlers of another group = %+v, %v", other, err)
	}
	if err := e.s.PublishHandlers(e.ctx, e.g, []repository.HandlerDef{{Kind: "bad", Schema: json.RawMessage(`{`)}}); err == nil {
		e.t.Errorf("PublishHandlers with a schema that is not JSON: no error")
	}
}

// A schedule is never stale: MarkStale does not mark it, a removal of
// stale tasks does not remove it, the views do not call it stale.
func testSchedulesNeverStale(e *env) {
	n := e.now()
	e.pending("reg")
	e.create(sched("s", "mailer", n))
	ts, err := e.s.MarkStale(e.ctx, e.g, []string{"reg", "s"})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].Name != "reg" || ts[0].StaleSince.IsZero() {
		e.t.Errorf("MarkStale returned %+v, want the registered task alone, marked", ts)
	}
	if rs, err := e.s.RegisteredTasks(e.ctx, e.g); err != nil || len(rs) != 1 || rs[0].Name != "reg" {
		e.t.Errorf("RegisteredTasks = %+v, %v; want the registered task alone (a node's upkeep never reads the schedules)", rs, err)
	}
	if e.task("s").StaleSince != (time.Time{}) {
		e.t.Errorf("stored schedule marked stale: %+v", e.task("s"))
	}
	later := e.waitPast(n)
	if rows, err := e.s.RemoveTask(e.ctx, e.g, "s", repository.Removal{StaleBefore: later}); err != nil || len(rows) != 0 {
		e.t.Errorf("RemoveTask of a stale-conditioned schedule = %+v, %v; want nothing removed", rows, err)
	}
	e.task("s")
	// A live node that registers only "elsewhere": reg is stale, s is not.
	e.beat(e.node("n"), e.publish("elsewhere"), false)
	e.wantNames("stale in the views", e.stale(), "reg")
}

// A batch of several option sets, interleaved: each row takes its own,
// as returned and as stored.
func testCreateOptionSets(e *env) {
	n := e.now()
	sets := []repository.TaskOptions{
		{}, {Timezone: "Europe/Paris", MaxRetries: 3, Timeout: time.Minute},
		{Misfire: repository.MisfireSkip, RetryBackoff: time.Second, EveryFromCreation: true},
	}
	var defs []repository.ScheduleDef
	for i := range 30 {
		d := sched(fmt.Sprintf("o-%02d", i), "m", n.Add(time.Hour))
		d.Options = sets[i%len(sets)]
		defs = append(defs, d)
	}
	for i, t := range e.create(defs...) { // which compares each row with the stored one
		if t.Options != defs[i].Options {
			e.t.Errorf("options of %s = %+v, want %+v", t.Name, t.Options, defs[i].Options)
		}
	}
}

// A taken name at the end of a large batch fails it as a whole: none of
// the free names before it is written, audited or versioned.
func testCreateTakenLate(e *env) {
	n := e.now()
	e.create(sched("existing", "m", n))
	var defs []repository.ScheduleDef
	for i := range 300 {
		defs = append(defs, sched(fmt.Sprintf("free-%03d", i), "m", n))
	}
	defs = append(defs, sched("existing", "m", n))
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor})
	_, err := e.s.CreateSchedules(ctx, e.g, defs)
	e.wantErr("CreateSchedules ending with a taken name", err, repository.ErrTaskExists, "existing")
	for _, i := range []int{0, 150, 299} {
		e.gone("after the refused batch", defs[i].Name)
		if _, err := e.s.Revisions(e.ctx, e.g, defs[i].Name); !errors.Is(err, repository.ErrTaskNotFound) {
			e.t.Errorf("Revisions(%q) after the refused batch = %v, want ErrTaskNotFound", defs[i].Name, err)
		}
	}
	if got := e.audit(repository.AuditFilter{}); len(got) != 0 {
		e.t.Errorf("the refused batch was audited: %d entries", len(got))
	}
	if all, err := e.s.Tasks(e.ctx, e.g); err != nil || len(all) != 1 {
		e.t.Errorf("Tasks after the refused batch = %d rows, %v; want the one created before", len(all), err)
	}
}

// A tombstone amid free names: the batch writes every row, in the order
// given, the tombstone revived under its id with only its new revision,
// one audit entry and revision 1 per row.
func testCreateRevivesInBatch(e *env) {
	n := e.now()
	e.create(sched("s", "mailer", n.Add(-time.Second)))
	up := e.update("s", repository.ScheduleDef{Handler: "mailer", Cron: cronB, Args: argsB, NextStartTime: n.Add(-time.Second)})
	e.runOnce(e.claim(e.node("n").ID, up)[0], repository.ExecSucceeded) // a run: history to keep
	tomb := e.remove("s", repository.Removal{KeepHistory: true})
	if len(tomb) != 1 || tomb[0].Status != repository.TaskRemoved {
		e.t.Fatalf("RemoveTask = %+v, want the tombstone of s", tomb)
	}
	var defs []repository.ScheduleDef
	for i := range 150 {
		defs = append(defs, sched(fmt.Sprintf("new-%03d", i), "bulk", n.Add(time.Hour)))
	}
	defs = slices.Insert(defs, 75, repository.ScheduleDef{Name: "s", Handler: "pager", Cron: cronA, Args: argsOther, NextStartTime: n.Add(time.Hour)})
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor})
	ts, err := e.s.CreateSchedules(ctx, e.g, defs)
	if err != nil {
		e.t.Fatalf("CreateSchedules: %v", err)
	}
	for i, d := range defs {
		if ts[i].Name != d.Name {
			e.t.Fatalf("row %d = %q, want %q (defs order)", i, ts[i].Name, d.Name)
		}
		e.sameTask("returned "+d.Name, ts[i], e.task(d.Name))
	}
	if ts[75].ID != tomb[0].ID || ts[75].Version != tomb[0].Version+1 || ts[75].Revision != 1 {
		e.t.Errorf("revived row %+v, want id %d, version %d, revision 1", ts[75], tomb[0].ID, tomb[0].Version+1)
	}
	e.wantRevisions("revisions of the revived row", e.revisions("s"),
		repository.Revision{Revision: 1, Handler: "pager", Cron: cronA, Args: argsOther, Actor: auditActor})
	e.wantRevisions("revisions of a new row", e.revisions("new-149"),
		repository.Revision{Revision: 1, Handler: "bulk", Cron: cronA, Args: argsA, Actor: auditActor})
	if got := e.audit(repository.AuditFilter{Limit: 1000}); len(got) != len(defs) {
		e.t.Errorf("Audit = %d entries, want one per created row (%d)", len(got), len(defs))
	}
	if got := e.audit(repository.AuditFilter{Task: "s"}); len(got) != 1 || got[0].Action != "create" {
		e.t.Errorf("Audit of the revived row = %+v, want its create", got)
	}
}

// Batches created at once that share a name: one takes it, the others
// fail with ErrTaskExists naming it and write nothing.
func testCreateRace(e *env) {
	n := e.now()
	const racers = 4
	errs := make(chan error, racers)
	for r := range racers {
		go func() {
			var defs []repository.ScheduleDef
			for i := range 50 {
				defs = append(defs, sched(fmt.Sprintf("r%d-%02d", r, i), "m", n))
			}
			defs = append(defs, sched("shared", "m", n))
			_, err := e.s.CreateSchedules(e.ctx, e.g, defs)
			errs <- err
		}()
	}
	won := 0
	for range racers {
		err := <-errs
		if err == nil {
			won++
			continue
		}
		e.wantErr("a batch that lost the race", err, repository.ErrTaskExists, "shared")
	}
	if won != 1 {
		e.t.Fatalf("%d batches took the name, want 1", won)
	}
	all, err := e.s.Tasks(e.ctx, e.g)
	if err != nil || len(all) != 51 {
		e.t.Errorf("Tasks = %d rows, %v; want the winner's 51", len(all), err)
	}
}
