package storetest

import (
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Runs that go on without their claim (OverlapAllowAll): a finish with
// Status "" and EndRun.
var endRunCases = []testCase{
	{"LaunchThenEnd", testLaunchThenEnd},
	{"EndBeforeLaunch", testEndBeforeLaunch},
}

// launch is the finish that starts a run going on without its claim:
// the row moves on a minute and stays claimed; the run is appended
// running.
func launch(t repository.Task, ran time.Duration) repository.Finish {
	return repository.Finish{
		Claim: t.Claim(), Revision: t.Revision, Next: t.NextStartTime.Add(time.Minute), NextAttempt: 1, Cron: t.Cron, Keep: true,
		Run: &repository.Execution{ScheduledAt: t.NextStartTime, Attempt: 1, Kind: repository.RunCron}, Ran: ran,
	}
}

// end is the EndRun of the run launch(t) started on node.
func end(t repository.Task, node repository.NodeID, st repository.ExecStatus, pauseAfter int) repository.RunEnd {
	return repository.RunEnd{
		Task: t.ID, Node: node, Run: repository.Execution{ScheduledAt: t.NextStartTime, Attempt: 1, Kind: repository.RunCron},
		Ran: time.Millisecond, Status: st, Error: "e-" + string(st), PauseAfter: pauseAfter,
	}
}

// The launch moves the row on and keeps the task's last status; the run
// is running in the history until EndRun ends it, which the task's last
// status, error and failures then follow, without a version change; a
// retried EndRun changes nothing more.
func testLaunchThenEnd(e *env) {
	node := e.node("n")
	t := e.claim(node.ID, e.pending("a"))[0]
	t, _ = e.runOnce(t, repository.ExecFailed) // last status failed, 1 failure
	fired := t
	t = e.finishHeld(launch(fired, 0))
	if t.LastStatus != repository.ExecFailed || t.Failures != 1 || t.Status != repository.TaskDoing ||
		!t.NextStartTime.Equal(fired.NextStartTime.Add(time.Minute)) {
		t2 := t
		e.t.Fatalf("after the launch: status %s, last %s, failures %d, next %v", t2.Status, t2.LastStatus, t2.Failures, t2.NextStartTime)
	}
	xs := e.history("a", repository.HistoryFilter{Fire: fired.NextStartTime})
	if len(xs) != 1 || xs[0].Status != repository.ExecRunning {
		e.t.Fatalf("the launched run: %+v, want one running row", xs)
	}
	for range 2 { // the second is a retry
		if err := e.s.EndRun(e.ctx, end(fired, node.ID, repository.ExecSucceeded, 0)); err != nil {
			e.t.Fatal(err)
		}
	}
	xs = e.history("a", repository.HistoryFilter{Fire: fired.NextStartTime})
	if len(xs) != 1 || xs[0].Status != repository.ExecSucceeded || xs[0].Error != "e-succeeded" || xs[0].FinishedAt.IsZero() {
		e.t.Fatalf("the ended run: %+v, want one succeeded row", xs)
	}
	got := e.task("a")
	if got.LastStatus != repository.ExecSucceeded || got.Failures != 0 || got.Version != t.Version || got.NodeID != node.ID {
		e.t.Fatalf("the task after EndRun: last %s, failures %d, version %d (was %d), node %d",
			got.LastStatus, got.Failures, got.Version, t.Version, got.NodeID)
	}
}

// An end written before its launch's finish is the run's row; the launch
// appends nothing beside it. An end that makes the failures reach
// PauseAfter pauses the task (a claimed one parks at its next finish),
// audited; a launch whose claim was lost appends nothing.
func testEndBeforeLaunch(e *env) {
	node := e.node("n")
	t := e.claim(node.ID, e.pending("b"))[0]
	t, _ = e.runOnce(t, repository.ExecFailed)
	if err := e.s.EndRun(e.ctx, end(t, node.ID, repository.ExecFailed, 2)); err != nil {
		e.t.Fatal(err)
	}
	after := e.finishHeld(launch(t, 0))
	xs := e.history("b", repository.HistoryFilter{Fire: t.NextStartTime})
	if len(xs) != 1 || xs[0].Status != repository.ExecFailed {
		e.t.Fatalf("runs of the fire: %+v, want the ended one only", xs)
	}
	got := e.task("b")
	if !got.Paused || got.Failures != 2 || got.LastStatus != repository.ExecFailed {
		e.t.Fatalf("after 2 failures with PauseAfter 2: paused %v, failures %d, last %s", got.Paused, got.Failures, got.LastStatus)
	}
	if es := e.audit(repository.AuditFilter{Task: "b"}); len(es) != 1 || es[0].Action != "pause" || es[0].Via != "node" {
		e.t.Fatalf("audit: %+v, want the node's pause", es)
	}
	// The claim is lost: its launch finish appends no row.
	lost := after
	lost.Version = after.Version + 7
	if r := e.finish(launch(lost, 0))[0]; r.Err == nil {
		e.t.Fatal("a launch under a lost claim was written")
	}
	if xs := e.history("b", repository.HistoryFilter{Fire: after.NextStartTime}); len(xs) != 0 {
		e.t.Fatalf("a lost launch appended %+v", xs)
	}
}
