package storetest

import (
	"context"
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var auditCases = []testCase{
	{"ControlRecordsItsEntry", testAuditControl},
	{"NothingForAnUnknownTask", testAuditUnknown},
	{"RemoveRecordsOnlyWhatHappened", testAuditRemove},
	{"RecordAndPage", testAuditPage},
	{"RunKinds", testRunKinds},
}

var auditActor = repository.Actor{Name: "alice", Via: "cli", From: "laptop"}

func (e *env) audit(f repository.AuditFilter) []repository.AuditEntry {
	e.t.Helper()
	es, err := e.s.Audit(e.ctx, e.g, f)
	if err != nil {
		e.t.Fatalf("Audit(%+v): %v", f, err)
	}
	return es
}

// Every control operation called with an entry in its context records it,
// stamped with the store's clock, the group and the task.
func testAuditControl(e *env) {
	e.pending("t")
	before := e.now()
	ops := []struct {
		action string
		op     controlOp
	}{
		{"pause", e.s.Pause}, {"resume", e.s.Resume}, {"trigger", e.triggerOp},
		{"reschedule", func(ctx context.Context, g, n string) (repository.Task, error) {
			return e.s.Reschedule(ctx, g, n, cronB, []time.Time{e.now().Add(time.Hour)})
		}},
	}
	for _, o := range ops {
		ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor, Action: o.action, Detail: "d-" + o.action})
		if _, err := o.op(ctx, e.g, "t"); err != nil {
			e.t.Fatalf("%s: %v", o.action, err)
		}
	}
	if _, err := e.s.Pause(e.ctx, e.g, "t"); err != nil { // no entry in the context: nothing recorded
		e.t.Fatalf("Pause: %v", err)
	}
	after := e.now()
	got := e.audit(repository.AuditFilter{})
	if len(got) != len(ops) {
		e.t.Fatalf("Audit = %d entries %+v, want %d", len(got), got, len(ops))
	}
	for i, o := range ops {
		x := got[len(ops)-1-i] // newest first
		if x.Action != o.action || x.Detail != "d-"+o.action || x.Actor != auditActor || x.Task != "t" || x.Group != e.g || x.ID == 0 {
			e.t.Errorf("entry %d = %+v, want %s of t by %+v", i, x, o.action, auditActor)
		}
		e.within("audit At", x.At, before, after)
	}
	if got[0].ID <= got[1].ID {
		e.t.Errorf("Audit not newest first: ids %d, %d", got[0].ID, got[1].ID)
	}
	if other, err := e.s.Audit(e.ctx, e.other(), repository.AuditFilter{}); err != nil || len(other) != 0 {
		e.t.Errorf("Audit of another group = %+v, %v; want none", other, err)
	}
}

func testAuditUnknown(e *env) {
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor, Action: "pause"})
	if _, err := e.s.Pause(ctx, e.g, "nope"); !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Fatalf("Pause of an unknown task = %v, want ErrTaskNotFound", err)
	}
	if got := e.audit(repository.AuditFilter{}); len(got) != 0 {
		e.t.Errorf("an action that found no task was recorded: %+v", got)
	}
}

func testAuditRemove(e *env) {
	e.pending("kept")
	e.pending("gone")
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor, Action: "remove"})
	// Conditional on staleness it does not hold: nothing removed, nothing recorded.
	if rows, err := e.s.RemoveTask(ctx, e.g, "kept", repository.Removal{StaleBefore: e.now()}); err != nil || len(rows) != 0 {
		e.t.Fatalf("conditional RemoveTask = %v, %v; want nothing removed", rows, err)
	}
	if rows, err := e.s.RemoveTask(ctx, e.g, "gone", repository.Removal{}); err != nil || len(rows) != 1 {
		e.t.Fatalf("RemoveTask = %v, %v", rows, err)
	}
	got := e.audit(repository.AuditFilter{})
	if len(got) != 1 || got[0].Task != "gone" || got[0].Action != "remove" {
		e.t.Errorf("Audit after removals = %+v, want the one removal of gone", got)
	}
}

func testAuditPage(e *env) {
	for _, task := range []string{"a", "b", "a", ""} {
		if err := e.s.RecordAudit(e.ctx, repository.AuditEntry{Group: e.g, Task: task, Actor: auditActor, Action: "prune"}); err != nil {
			e.t.Fatalf("RecordAudit: %v", err)
		}
	}
	all := e.audit(repository.AuditFilter{})
	if len(all) != 4 {
		e.t.Fatalf("Audit = %+v, want 4 entries", all)
	}
	if a := e.audit(repository.AuditFilter{Task: "a"}); len(a) != 2 || a[0].Task != "a" || a[1].Task != "a" {
		e.t.Errorf("Audit of task a = %+v", a)
	}
	page := e.audit(repository.AuditFilter{Limit: 2})
	rest := e.audit(repository.AuditFilter{BeforeID: page[1].ID})
	if len(page) != 2 || len(rest) != 2 || rest[0].ID != all[2].ID || rest[1].ID != all[3].ID {
		e.t.Errorf("pages %+v then %+v, want all of %+v", page, rest, all)
	}
	if none := e.audit(repository.AuditFilter{Since: e.now().Add(time.Hour)}); len(none) != 0 {
		e.t.Errorf("Audit since an hour ahead = %+v", none)
	}
}

// A trigger marks the pending fire manual; the run records the kind its
// node gives it; the finish that schedules the next fire clears the mark,
// and a trigger that came while a fire ran marks the fire it schedules.
func testRunKinds(e *env) {
	node := e.node("n")
	e.pending("t")
	trig := e.do("Trigger", e.triggerOp, "t")
	if trig.FireKind != repository.RunManual {
		e.t.Fatalf("triggered pending row FireKind = %q, want manual", trig.FireKind)
	}
	held := e.claim(node.ID, trig)[0]
	if held.FireKind != repository.RunManual {
		e.t.Fatalf("claimed row FireKind = %q, want manual (a claim keeps it)", held.FireKind)
	}
	x, err := e.s.StartExecution(e.ctx, held.Claim(), repository.Execution{
		ScheduledAt: held.NextStartTime, Attempt: 1, Kind: repository.KindOf(held, ""),
	})
	if err != nil || x.Kind != repository.RunManual {
		e.t.Fatalf("StartExecution = %+v, %v; want kind manual", x, err)
	}
	held = e.finishHeld(keep(held, x.ID, repository.ExecSucceeded))
	if held.FireKind != "" {
		e.t.Errorf("FireKind after the manual run's finish = %q, want \"\" (the cron's fire)", held.FireKind)
	}
	if got := e.exec("t", x.ID); got.Kind != repository.RunManual {
		e.t.Errorf("recorded kind = %q, want manual", got.Kind)
	}
	// A trigger while a fire is held marks the extra fire its finish schedules.
	e.do("Trigger", e.triggerOp, "t")
	f := keep(held, 0, repository.ExecFailed)
	f.Run = &repository.Execution{ScheduledAt: held.NextStartTime, Attempt: 1, Kind: repository.RunCron}
	after := e.finishHeld(f)
	if after.FireKind != repository.RunManual || after.Status != repository.TaskPending {
		e.t.Errorf("finish of a fire triggered meanwhile: %+v, want pending with FireKind manual", after)
	}
	if xs := e.history("t", repository.HistoryFilter{Limit: 1}); len(xs) != 1 || xs[0].Kind != repository.RunCron {
		e.t.Errorf("appended run = %+v, want kind cron", xs)
	}
	// A reschedule replaces the triggered fire with the cron's.
	re := e.do("Reschedule", func(ctx context.Context, g, n string) (repository.Task, error) {
		return e.s.Reschedule(ctx, g, n, cronB, []time.Time{e.now().Add(time.Hour)})
	}, "t")
	if re.FireKind != "" {
		e.t.Errorf("FireKind after Reschedule = %q, want \"\"", re.FireKind)
	}
}
