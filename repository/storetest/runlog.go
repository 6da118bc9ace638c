package storetest

import (
	"errors"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Run logs: written by a running job's flushes (WriteRunLogs, found by
// the start key) and by its finish (Finish.Log, RunEnd.Log), read by
// RunLog, pruned with their runs.
var runLogCases = []testCase{
	{"WhileRunningThenFinish", testRunLogWhileRunning},
	{"AppendedByFinish", testRunLogAppended},
	{"EndRun", testRunLogEndRun},
	{"NotFound", testRunLogNotFound},
	{"Pruned", testRunLogPruned},
}

func (e *env) runLog(name string, id int64) repository.RunLog {
	e.t.Helper()
	l, err := e.s.RunLog(e.ctx, e.g, name, id)
	if err != nil {
		e.t.Fatalf("RunLog(%q, %d): %v", name, id, err)
	}
	return l
}

// update is the flush of a running job's log, by the start key of x.
func update(t repository.Task, x repository.Execution, log string) repository.RunLogUpdate {
	return repository.RunLogUpdate{Task: t.ID, Node: t.NodeID, ScheduledAt: x.ScheduledAt, Attempt: x.Attempt, Batch: x.Batch, Log: log}
}

// A running job's log is replaced by each flush (a retried flush writes
// it again, not twice); its finish writes the final one; a flush after
// the finish, or for a run not recorded, writes nothing.
func testRunLogWhileRunning(e *env) {
	node := e.node("n")
	t := e.claim(node.ID, e.pending("a"))[0]
	x := e.start(t)
	for _, log := range []string{"line 1\n", "line 1\nline 2\n", "line 1\nline 2\n"} {
		if n, err := e.s.WriteRunLogs(e.ctx, []repository.RunLogUpdate{update(t, x, log)}); err != nil || n != 1 {
			e.t.Fatalf("WriteRunLogs of a running job = %d, %v; want 1 row", n, err)
		}
	}
	if l := e.runLog("a", x.ID); l.Log != "line 1\nline 2\n" || l.Execution.Status != repository.ExecRunning || l.Execution.TaskName != "a" {
		e.t.Fatalf("RunLog while running = %+v", l)
	}
	f := keep(t, x.ID, repository.ExecSucceeded)
	f.Log = "line 1\nline 2\nline 3\n"
	e.finishHeld(f)
	late := update(t, x, "late\n")
	missing := update(t, repository.Execution{ScheduledAt: x.ScheduledAt.Add(time.Hour), Attempt: 1}, "none\n")
	if n, err := e.s.WriteRunLogs(e.ctx, []repository.RunLogUpdate{late, missing}); err != nil || n != 0 {
		e.t.Fatalf("WriteRunLogs of an ended and an unrecorded run = %d, %v; want 0 rows", n, err)
	}
	if l := e.runLog("a", x.ID); l.Log != f.Log || l.Execution.Status != repository.ExecSucceeded {
		e.t.Fatalf("RunLog after the finish = %+v, want the finish's log", l)
	}
	// History does not carry logs around.
	if xs := e.history("a", repository.HistoryFilter{}); len(xs) != 1 || xs[0].ID != x.ID {
		e.t.Fatalf("history = %+v", xs)
	}
}

// A short run, recorded only at its finish (Finish.Run), gets its log
// there; a finish without a log leaves a flushed one.
func testRunLogAppended(e *env) {
	node := e.node("n")
	t := e.claim(node.ID, e.pending("b"))[0]
	f := keep(t, 0, repository.ExecFailed)
	f.Run = &repository.Execution{ScheduledAt: t.NextStartTime, Attempt: 1, Kind: repository.RunCron}
	f.Log = strings.Repeat("x", 1000) + "\n"
	t2 := e.finishHeld(f)
	xs := e.history("b", repository.HistoryFilter{})
	if len(xs) != 1 {
		e.t.Fatalf("history = %+v", xs)
	}
	if l := e.runLog("b", xs[0].ID); l.Log != f.Log || l.Execution.Status != repository.ExecFailed {
		e.t.Fatalf("the appended run's log = %q (%s)", l.Log, l.Execution.Status)
	}
	x := e.start(t2)
	if _, err := e.s.WriteRunLogs(e.ctx, []repository.RunLogUpdate{update(t2, x, "flushed\n")}); err != nil {
		e.t.Fatal(err)
	}
	e.finishHeld(keep(t2, x.ID, repository.ExecSucceeded))
	if l := e.runLog("b", x.ID); l.Log != "flushed\n" {
		e.t.Fatalf("a finish without a log replaced the flushed one: %q", l.Log)
	}
}

// The end of a run that went on without its claim writes its log.
func testRunLogEndRun(e *env) {
	node := e.node("n")
	t := e.claim(node.ID, e.pending("c"))[0]
	e.finishHeld(launch(t, 0))
	r := end(t, node.ID, repository.ExecSucceeded, 0)
	r.Log = "detached\n"
	if err := e.s.EndRun(e.ctx, r); err != nil {
		e.t.Fatal(err)
	}
	xs := e.history("c", repository.HistoryFilter{Fire: t.NextStartTime})
	if len(xs) != 1 {
		e.t.Fatalf("history = %+v", xs)
	}
	if l := e.runLog("c", xs[0].ID); l.Log != "detached\n" {
		e.t.Fatalf("the ended run's log = %q", l.Log)
	}
}

// An unknown task is ErrTaskNotFound; a run of another task, or none,
// is ErrRunNotFound.
func testRunLogNotFound(e *env) {
	node := e.node("n")
	t := e.claim(node.ID, e.pending("d"))[0]
	_, x := e.runOnce(t, repository.ExecSucceeded)
	e.pending("other")
	if _, err := e.s.RunLog(e.ctx, e.g, "nope", x); !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Fatalf("RunLog of an unknown task: %v", err)
	}
	if _, err := e.s.RunLog(e.ctx, e.g, "other", x); !errors.Is(err, repository.ErrRunNotFound) {
		e.t.Fatalf("RunLog of another task's run: %v", err)
	}
	if _, err := e.s.RunLog(e.ctx, e.other(), "d", x); !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Fatalf("RunLog in another group: %v", err)
	}
	if _, err := e.s.RunLog(e.ctx, e.g, "d", x+1000); !errors.Is(err, repository.ErrRunNotFound) {
		e.t.Fatalf("RunLog of no run: %v", err)
	}
}

// A pruned run's log goes with it.
func testRunLogPruned(e *env) {
	node := e.node("n")
	t := e.claim(node.ID, e.pending("p"))[0]
	x := e.start(t)
	f := keep(t, x.ID, repository.ExecSucceeded)
	f.Log = "old\n"
	t = e.finishHeld(f)
	_, x2 := e.runOnce(t, repository.ExecSucceeded)
	if _, err := e.s.PruneHistory(e.ctx, e.g, 0, 1); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.s.RunLog(e.ctx, e.g, "p", x.ID); !errors.Is(err, repository.ErrRunNotFound) {
		e.t.Fatalf("RunLog of a pruned run: %v", err)
	}
	e.runLog("p", x2)
}
