package storetest

import (
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The versioned definitions (RevisionStore): every definition a task
// takes is recorded with its revision, who made the change and when, in
// the same statement or transaction as the change; runs carry the
// revision they ran; a revived tombstone starts again.
var revisionCases = []testCase{
	{"CreateUpdateReschedule", testRevisionsEdits},
	{"Batch", testRevisionsBatch},
	{"RunRecordsRevision", testRevisionsRun},
	{"Registered", testRevisionsRegistered},
	{"RefusedWriteNothing", testRevisionsRefused},
	{"Removal", testRevisionsRemoval},
}

var otherActor = repository.Actor{Name: "bob", Via: "dashboard", From: "10.0.0.7"}

func (e *env) revisions(name string) []repository.Revision {
	e.t.Helper()
	rs, err := e.s.Revisions(e.ctx, e.g, name)
	if err != nil {
		e.t.Fatalf("Revisions(%q): %v", name, err)
	}
	return rs
}

// wantRevisions fails unless rs are the revisions want (newest first),
// field by field, arguments as JSON; ChangedAt is only checked to be set.
func (e *env) wantRevisions(what string, rs []repository.Revision, want ...repository.Revision) {
	e.t.Helper()
	if len(rs) != len(want) {
		e.t.Fatalf("%s: %d revisions %+v, want %d", what, len(rs), rs, len(want))
	}
	for i, w := range want {
		g := rs[i]
		e.sameJSON(fmt.Sprintf("%s: args of revision %d", what, w.Revision), g.Args, w.Args)
		if g.ChangedAt.IsZero() {
			e.t.Errorf("%s: revision %d has no ChangedAt", what, g.Revision)
		}
		g.Args, g.ChangedAt, w.Args, w.ChangedAt = "", time.Time{}, "", time.Time{}
		if g != w {
			e.t.Errorf("%s: revisions[%d]\n got  %+v\n want %+v", what, i, g, w)
		}
	}
}

// Create records revision 1 by its actor; an update the new definition
// (revision 2) by its own; a reschedule the new cron (revision 3), with
// no actor when the context names none. Newest first, each stamped with
// the store's clock when it was written, the row's revision the newest.
func testRevisionsEdits(e *env) {
	n := e.now()
	opts := repository.TaskOptions{Timezone: "Europe/Paris", MaxRetries: 2}
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor})
	before := e.now()
	if _, err := e.s.CreateSchedules(ctx, e.g, []repository.ScheduleDef{
		{Name: "s", Handler: "mailer", Cron: cronA, Args: argsA, Options: opts, NextStartTime: n.Add(time.Hour)},
	}); err != nil {
		e.t.Fatal(err)
	}
	created := e.now()
	r1 := repository.Revision{Revision: 1, Handler: "mailer", Cron: cronA, Args: argsA, Options: opts, Actor: auditActor}
	rs := e.revisions("s")
	e.wantRevisions("after create", rs, r1)
	e.within("ChangedAt of revision 1", rs[0].ChangedAt, before, created)

	opts2 := repository.TaskOptions{Timeout: time.Minute}
	ctx2 := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: otherActor})
	if _, err := e.s.UpdateSchedule(ctx2, e.g, "s", repository.ScheduleDef{
		Handler: "pager", Cron: cronB, Args: argsOther, Options: opts2, NextStartTime: n.Add(2 * time.Hour),
	}); err != nil {
		e.t.Fatal(err)
	}
	updated := e.now()
	r2 := repository.Revision{Revision: 2, Handler: "pager", Cron: cronB, Args: argsOther, Options: opts2, Actor: otherActor}
	rs = e.revisions("s")
	e.wantRevisions("after update", rs, r2, r1)
	e.within("ChangedAt of revision 2", rs[0].ChangedAt, created, updated)

	if _, err := e.s.Reschedule(e.ctx, e.g, "s", cronA, []time.Time{n.Add(3 * time.Hour)}); err != nil {
		e.t.Fatal(err)
	}
	r3 := repository.Revision{Revision: 3, Handler: "pager", Cron: cronA, Args: argsOther, Options: opts2}
	rs = e.revisions("s")
	e.wantRevisions("after reschedule", rs, r3, r2, r1)
	e.within("ChangedAt of revision 3", rs[0].ChangedAt, updated, e.now())
	if got := e.task("s").Revision; got != 3 {
		e.t.Errorf("row revision = %d, want 3 (the newest recorded)", got)
	}
	// Other actions are not edits of the definition.
	e.do("Pause", e.s.Pause, "s")
	e.do("Resume", e.s.Resume, "s")
	if _, err := e.s.Trigger(ctx, e.g, "s", argsB); err != nil {
		e.t.Fatal(err)
	}
	e.wantRevisions("after pause, resume, trigger", e.revisions("s"), r3, r2, r1)

	_, err := e.s.Revisions(e.ctx, e.g, "ghost")
	e.wantErr("Revisions of an unknown name", err, repository.ErrTaskNotFound, "ghost")
	_, err = e.s.Revisions(e.ctx, e.other(), "s")
	e.wantErr("Revisions in another group", err, repository.ErrTaskNotFound, "s")
}

// A batch records revision 1 of each of its rows, by the batch's actor.
func testRevisionsBatch(e *env) {
	n := e.now()
	var defs []repository.ScheduleDef
	for i := range 120 {
		defs = append(defs, sched(fmt.Sprintf("b-%03d", i), "bulk", n.Add(time.Hour)))
	}
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor})
	if _, err := e.s.CreateSchedules(ctx, e.g, defs); err != nil {
		e.t.Fatal(err)
	}
	for _, i := range []int{0, 1, 59, 119} {
		e.wantRevisions("revisions of "+defs[i].Name, e.revisions(defs[i].Name),
			repository.Revision{Revision: 1, Handler: "bulk", Cron: cronA, Args: argsA, Actor: auditActor})
	}
}

// A run records the revision it ran: the one the row had when claimed,
// not one an edit wrote while it ran.
func testRevisionsRun(e *env) {
	n := e.now()
	node := e.node("n")
	e.create(sched("s", "mailer", n.Add(-time.Second)))
	up := e.update("s", repository.ScheduleDef{Handler: "mailer", Cron: cronA, Args: argsB, NextStartTime: n.Add(-time.Second)})
	held := e.claim(node.ID, up)[0]
	x, err := e.s.StartExecution(e.ctx, held.Claim(), repository.Execution{
		ScheduledAt: held.NextStartTime, Attempt: 1, Args: held.RunArgs(), Revision: held.Revision})
	if err != nil {
		e.t.Fatal(err)
	}
	// Edited while it runs: revision 3 is recorded, the run keeps 2.
	e.update("s", repository.ScheduleDef{Handler: "mailer", Cron: cronB, Args: argsOther, NextStartTime: n.Add(time.Hour)})
	e.finishHeld(repository.Finish{Claim: held.Claim(), Revision: held.Revision, ExecutionID: x.ID,
		Status: repository.ExecSucceeded, Next: n.Add(time.Minute), NextAttempt: 1, Cron: held.Cron})
	rs := e.revisions("s")
	if len(rs) != 3 || rs[0].Revision != 3 || rs[1].Revision != 2 {
		e.t.Fatalf("revisions = %+v, want 3, 2, 1", rs)
	}
	ran := e.exec("s", x.ID)
	if ran.Revision != rs[1].Revision {
		e.t.Errorf("the run recorded revision %d, want %d (the one it ran)", ran.Revision, rs[1].Revision)
	}
	e.sameJSON("the run's args", ran.Args, rs[1].Args)
}

// A registered task records no revision at its registration (the code's
// definition), nor when a registration changes it; a reschedule records
// the new cron, the handler being the task's name.
func testRevisionsRegistered(e *env) {
	n := e.now()
	t := e.upsert(repository.TaskDef{Name: "reg", Cron: cronA, NextStartTime: n.Add(time.Hour),
		Options: repository.TaskOptions{MaxRetries: 1}})[0]
	if rs := e.revisions("reg"); len(rs) != 0 {
		e.t.Errorf("revisions of a registered task = %+v, want none", rs)
	}
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor})
	got, err := e.s.Reschedule(ctx, e.g, "reg", cronB, []time.Time{n.Add(2 * time.Hour)})
	if err != nil {
		e.t.Fatal(err)
	}
	want := repository.Revision{Revision: t.Revision + 1, Handler: "reg", Cron: cronB, Options: t.Options, Actor: auditActor}
	e.wantRevisions("after a reschedule", e.revisions("reg"), want)
	if got.Revision != want.Revision {
		e.t.Errorf("row revision %d, want %d", got.Revision, want.Revision)
	}
	e.upsert(repository.TaskDef{Name: "reg", Cron: cronA, NextStartTime: n.Add(time.Hour)}) // the code's cron changes
	e.wantRevisions("after a registration", e.revisions("reg"), want)
}

// A refused create or update records nothing.
func testRevisionsRefused(e *env) {
	n := e.now()
	e.pending("reg")
	e.create(sched("s", "m", n))
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor})
	if _, err := e.s.CreateSchedules(ctx, e.g, []repository.ScheduleDef{sched("fresh", "m", n), sched("s", "m", n)}); !errors.Is(err, repository.ErrTaskExists) {
		e.t.Fatalf("CreateSchedules over a taken name = %v", err)
	}
	if _, err := e.s.UpdateSchedule(ctx, e.g, "reg", sched("", "m", n)); !errors.Is(err, repository.ErrNotDynamic) {
		e.t.Fatalf("UpdateSchedule of a registered task = %v", err)
	}
	if _, err := e.s.UpdateSchedule(ctx, e.g, "s", repository.ScheduleDef{Handler: "m", Cron: cronA, Args: "{", NextStartTime: n}); err == nil {
		e.t.Fatal("UpdateSchedule with arguments that are not JSON: no error")
	}
	if rs := e.revisions("reg"); len(rs) != 0 {
		e.t.Errorf("revisions of the registered task = %+v, want none", rs)
	}
	e.wantRevisions("revisions of s", e.revisions("s"), repository.Revision{Revision: 1, Handler: "m", Cron: cronA, Args: argsA})
	if _, err := e.s.Revisions(e.ctx, e.g, "fresh"); !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Errorf("Revisions of a name a refused batch named = %v, want ErrTaskNotFound", err)
	}
}

// A removal that keeps the history keeps the revisions (Revisions reads
// a tombstone, as History does); one that deletes the row deletes them.
// A revived tombstone is a new task under the old id: its revisions are
// its own, from revision 1 (a schedule) or none (a registered task); the
// old runs keep the revisions they recorded.
func testRevisionsRemoval(e *env) {
	n := e.now()
	node := e.node("n")
	e.create(sched("s", "mailer", n.Add(-time.Second)))
	up := e.update("s", repository.ScheduleDef{Handler: "mailer", Cron: cronB, Args: argsB, NextStartTime: n.Add(-time.Second)})
	held := e.claim(node.ID, up)[0]
	x, err := e.s.StartExecution(e.ctx, held.Claim(), repository.Execution{ScheduledAt: held.NextStartTime, Attempt: 1, Revision: held.Revision})
	if err != nil {
		e.t.Fatal(err)
	}
	e.finishHeld(keep(held, x.ID, repository.ExecSucceeded))
	old := e.revisions("s")
	e.remove("s", repository.Removal{KeepHistory: true})
	e.wantRevisions("revisions of the tombstone", e.revisions("s"), old...)

	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: otherActor})
	if _, err := e.s.CreateSchedules(ctx, e.g, []repository.ScheduleDef{
		{Name: "s", Handler: "pager", Cron: cronA, Args: argsOther, NextStartTime: n.Add(time.Hour)},
	}); err != nil {
		e.t.Fatal(err)
	}
	e.wantRevisions("revisions of the revived schedule", e.revisions("s"),
		repository.Revision{Revision: 1, Handler: "pager", Cron: cronA, Args: argsOther, Actor: otherActor})
	if got := e.exec("s", x.ID); got.Revision != 2 {
		e.t.Errorf("the old run's revision = %d, want 2 (as recorded)", got.Revision)
	}
	e.update("s", repository.ScheduleDef{Handler: "pager", Cron: cronB, NextStartTime: n.Add(time.Hour)})
	if rs := e.revisions("s"); len(rs) != 2 || rs[0].Revision != 2 || rs[0].Args != "" || rs[1].Handler != "pager" {
		e.t.Errorf("revisions after an update of the revived schedule = %+v, want 2 and 1 of its own", rs)
	}

	// A registration reviving a schedule's tombstone: none of them stay.
	e.remove("s", repository.Removal{KeepHistory: true})
	e.upsert(def("s", n.Add(time.Hour)))
	if rs := e.revisions("s"); len(rs) != 0 {
		e.t.Errorf("revisions of the schedule revived as a registered task = %+v, want none", rs)
	}

	// A removal that deletes the row (no history kept) deletes them.
	e.create(sched("gone", "m", n.Add(time.Hour)))
	e.remove("gone", repository.Removal{})
	_, err = e.s.Revisions(e.ctx, e.g, "gone")
	e.wantErr("Revisions of a deleted schedule", err, repository.ErrTaskNotFound, "gone")
	e.create(sched("gone", "m", n.Add(time.Hour)))
	e.wantRevisions("revisions of a new schedule under a deleted one's name", e.revisions("gone"),
		repository.Revision{Revision: 1, Handler: "m", Cron: cronA, Args: argsA})
}
