package storetest

import (
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Cancel requests (CancelStore, CancelReader).
var cancelCases = []testCase{
	{"Request", testCancelRequest},
}

// Cancel records a request only for a task with a run in progress,
// naming the actor, in the audit log too; CancelsSince lists the
// group's requests after a time, oldest first, and no other group's; a
// request fences no claim (the version stays).
func testCancelRequest(e *env) {
	if _, err := e.s.Cancel(e.ctx, e.g, "nope"); !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Fatalf("Cancel of an unknown task = %v, want ErrTaskNotFound", err)
	}
	e.pending("idle")
	if _, err := e.s.Cancel(e.ctx, e.g, "idle"); !errors.Is(err, repository.ErrNotRunning) {
		e.t.Fatalf("Cancel of a task with no run = %v, want ErrNotRunning", err)
	}
	before := e.now().Add(-time.Millisecond)
	node := e.node("n")
	held := e.claim(node.ID, e.pending("busy"))[0]
	e.start(held)
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor, Action: "cancel"})
	got, err := e.s.Cancel(ctx, e.g, "busy")
	if err != nil {
		e.t.Fatalf("Cancel of a running task: %v", err)
	}
	if got.Version != held.Version || got.NodeID != node.ID {
		e.t.Fatalf("Cancel changed the claim: version %d node %d, held %d by %d", got.Version, got.NodeID, held.Version, node.ID)
	}
	reqs, err := e.s.CancelsSince(e.ctx, e.g, before)
	if err != nil || len(reqs) != 1 || reqs[0].Task != "busy" || reqs[0].By != auditActor.Name || reqs[0].At.Before(before) {
		e.t.Fatalf("CancelsSince = %+v, %v; want busy by %q", reqs, err, auditActor.Name)
	}
	if later, err := e.s.CancelsSince(e.ctx, e.g, reqs[0].At); err != nil || len(later) != 0 {
		e.t.Fatalf("CancelsSince its own time = %+v, %v; want none", later, err)
	}
	if theirs, err := e.s.CancelsSince(e.ctx, e.other(), before); err != nil || len(theirs) != 0 {
		e.t.Fatalf("CancelsSince of another group = %+v, %v", theirs, err)
	}
	if es := e.audit(repository.AuditFilter{}); len(es) != 1 || es[0].Action != "cancel" || es[0].Task != "busy" {
		e.t.Fatalf("audit after a cancel: %+v", es)
	}
	// A second request supersedes the first.
	if _, err := e.s.Cancel(e.ctx, e.g, "busy"); err != nil {
		e.t.Fatal(err)
	}
	if reqs2, err := e.s.CancelsSince(e.ctx, e.g, reqs[0].At); err != nil || len(reqs2) != 1 || !reqs2[0].At.After(reqs[0].At) {
		e.t.Fatalf("a second request: %+v, %v", reqs2, err)
	}
}
