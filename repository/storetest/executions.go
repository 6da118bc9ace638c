package storetest

import (
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var executionCases = []testCase{
	{"StartExecution", testStartExecution},
	{"StartExecutionLost", testStartExecutionLost},
	{"StartExecutionsBatch", testStartExecutions},
	{"StartExecutionRetry", testStartExecutionRetry},
	{"FencedRunKeepsItsRow", testFencedRunKeepsItsRow},
}

// A run that was fenced does not hold its start key: the same node
// running the same fire again (it lost the claim, then claimed the fire
// anew) gets a row of its own, and both runs show in the history.
func testFencedRunKeepsItsRow(e *env) {
	node := e.node("n")
	held := e.claimed("t", node.ID)
	run := repository.Execution{ScheduledAt: held.NextStartTime, Attempt: 1, Kind: repository.RunCron}
	first, err := e.s.StartExecution(e.ctx, held.Claim(), run)
	if err != nil {
		e.t.Fatalf("StartExecution: %v", err)
	}
	if k, err := e.s.Release(e.ctx, []repository.Claim{held.Claim()}); err != nil || k != 1 {
		e.t.Fatalf("Release = %d, %v", k, err)
	}
	again := e.claim(node.ID, e.task("t"))[0]
	if r := e.finish(keep(held, first.ID, repository.ExecSucceeded))[0]; !errors.Is(r.Err, repository.ErrClaimLost) {
		e.t.Fatalf("finish under the released claim = %v, want ErrClaimLost", r.Err)
	}
	second, err := e.s.StartExecution(e.ctx, again.Claim(), run)
	if err != nil {
		e.t.Fatalf("StartExecution of the fire run again: %v", err)
	}
	if second.ID == first.ID || second.Status != repository.ExecRunning {
		e.t.Fatalf("the fire run again got %+v; want a new running row (the first, %d, was fenced)", second, first.ID)
	}
	e.finishHeld(keep(again, second.ID, repository.ExecSucceeded))
	xs := e.history("t", repository.HistoryFilter{})
	if len(xs) != 2 || xs[0].ID != second.ID || xs[0].Status != repository.ExecSucceeded || xs[1].Status != repository.ExecFenced {
		e.t.Errorf("history = %+v, want the succeeded rerun over the fenced run", xs)
	}
}

func testStartExecution(e *env) {
	node := e.node("n")
	n := e.now()
	ts := e.upsert(def("root", n), repository.TaskDef{Name: "kid", Parent: "root", NextStartTime: n})
	root, kid := e.claim(node.ID, ts[0])[0], e.claim(node.ID, ts[1])[0]
	sched := n.Add(-time.Minute + 987654321)
	before := e.now()
	x, err := e.s.StartExecution(e.ctx, root.Claim(), repository.Execution{
		ScheduledAt: sched, Attempt: 2, Misfire: repository.MisfireSkip,
		// Ignored: the store takes these from the claim and its clock.
		TaskID: 999999, NodeID: 999999, Status: repository.ExecFailed,
	})
	after := e.now()
	if err != nil {
		e.t.Fatal(err)
	}
	if x.ID <= 0 {
		e.t.Errorf("execution id %d, want > 0", x.ID)
	}
	e.within("started_at", x.StartedAt, before, after)
	want := repository.Execution{
		ID: x.ID, TaskID: root.ID, NodeID: node.ID, ScheduledAt: micro(sched), StartedAt: x.StartedAt,
		Status: repository.ExecRunning, Attempt: 2, Misfire: repository.MisfireSkip,
	}
	x.TaskName = "" // History fills it; StartExecution need not
	e.sameExec("started", x, want)
	want.TaskName = "root"
	e.sameExec("History of the started execution", e.exec("root", x.ID), want)

	// The child's execution names its parent's.
	y, err := e.s.StartExecution(e.ctx, kid.Claim(), repository.Execution{ParentExecutionID: x.ID, ScheduledAt: sched, Attempt: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	if y.ID <= x.ID {
		e.t.Errorf("execution ids %d then %d: want increasing", x.ID, y.ID)
	}
	if got := e.exec("kid", y.ID); got.ParentExecutionID != x.ID || got.TaskID != kid.ID || got.Status != repository.ExecRunning {
		e.t.Errorf("child execution %+v: want parent execution %d, task %d, running", got, x.ID, kid.ID)
	}
	// Starting does not touch the task.
	e.sameTask("task after StartExecution", e.task("root"), root)
}

func testStartExecutionLost(e *env) {
	node, other := e.node("n"), e.node("m")
	held := e.claimed("job", node.ID)
	stale := repository.Claim{ID: held.ID, Version: held.Version - 1, NodeID: node.ID}
	foreign := repository.Claim{ID: held.ID, Version: held.Version, NodeID: other.ID}
	for what, c := range map[string]repository.Claim{"stale version": stale, "other node": foreign} {
		_, err := e.s.StartExecution(e.ctx, c, repository.Execution{ScheduledAt: held.NextStartTime, Attempt: 1})
		e.wantErr("StartExecution with a "+what, err, repository.ErrClaimLost, "")
	}
	if n, err := e.s.Release(e.ctx, []repository.Claim{held.Claim()}); err != nil || n != 1 {
		e.t.Fatalf("Release = %d, %v", n, err)
	}
	_, err := e.s.StartExecution(e.ctx, held.Claim(), repository.Execution{ScheduledAt: held.NextStartTime, Attempt: 1})
	e.wantErr("StartExecution after release", err, repository.ErrClaimLost, "")
	if xs := e.history("job", repository.HistoryFilter{}); len(xs) != 0 {
		e.t.Errorf("lost starts wrote executions: %+v", xs)
	}
}

// A repeated start of the same (task, node, fire, attempt) — a retry whose
// first reply was lost — returns the same row, running again.
func testStartExecutionRetry(e *env) {
	held := e.claimed("job", e.node("n1").ID)
	want := repository.Execution{ScheduledAt: held.NextStartTime, Attempt: 1}
	x, err := e.s.StartExecution(e.ctx, held.Claim(), want)
	if err != nil {
		e.t.Fatal(err)
	}
	y, err := e.s.StartExecution(e.ctx, held.Claim(), want)
	if err != nil || y.ID != x.ID || y.Status != repository.ExecRunning {
		e.t.Fatalf("second start = %+v, %v; want execution %d running again", y, err, x.ID)
	}
	res, err := e.s.StartExecutions(e.ctx, []repository.ExecStart{{Claim: held.Claim(), Execution: want}})
	if err != nil || len(res) != 1 || res[0].Err != nil || res[0].Execution.ID != x.ID {
		e.t.Fatalf("batch start = %+v, %v; want execution %d", res, err, x.ID)
	}
	if xs := e.history("job", repository.HistoryFilter{}); len(xs) != 1 {
		e.t.Errorf("retried starts wrote %d executions, want 1: %+v", len(xs), xs)
	}
}

// StartExecutions: one batch, each start with its own fence, results in
// the order of the requests.
func testStartExecutions(e *env) {
	if res, err := e.s.StartExecutions(e.ctx, nil); err != nil || res != nil {
		e.t.Errorf("StartExecutions(nil) = %v, %v; want nil, nil", res, err)
	}
	node, other := e.node("n"), e.node("m")
	n := e.now()
	held := e.claim(node.ID, e.upsert(def("a", n), def("b", n), def("c", n), def("d", n))...)
	if r, err := e.s.Release(e.ctx, []repository.Claim{held[2].Claim()}); err != nil || r != 1 {
		e.t.Fatalf("Release = %d, %v", r, err)
	}
	sched := n.Add(-time.Second + 4242)
	req := func(c repository.Claim, attempt int) repository.ExecStart {
		return repository.ExecStart{Claim: c, Execution: repository.Execution{ScheduledAt: sched, Attempt: attempt, Misfire: repository.MisfireCatchUp}}
	}
	reqs := []repository.ExecStart{
		req(held[3].Claim(), 2),
		req(repository.Claim{ID: held[1].ID, Version: held[1].Version, NodeID: other.ID}, 1), // another node
		req(held[0].Claim(), 1),
		req(held[2].Claim(), 1), // released
	}
	before := e.now()
	res, err := e.s.StartExecutions(e.ctx, reqs)
	after := e.now()
	if err != nil {
		e.t.Fatal(err)
	}
	if len(res) != len(reqs) {
		e.t.Fatalf("StartExecutions returned %d results for %d requests", len(res), len(reqs))
	}
	e.wantErr("start by another node", res[1].Err, repository.ErrClaimLost, "")
	e.wantErr("start of a released claim", res[3].Err, repository.ErrClaimLost, "")
	for _, i := range []int{0, 2} {
		if res[i].Err != nil {
			e.t.Errorf("start %d: %v", i, res[i].Err)
			continue
		}
		x, r := res[i].Execution, reqs[i]
		e.within("started_at", x.StartedAt, before, after)
		want := repository.Execution{ID: x.ID, TaskID: r.Claim.ID, NodeID: node.ID, ScheduledAt: micro(sched),
			StartedAt: x.StartedAt, Status: repository.ExecRunning, Attempt: r.Execution.Attempt, Misfire: repository.MisfireCatchUp}
		x.TaskName = ""
		e.sameExec("batch start", x, want)
		name := []string{"d", "", "a"}[i]
		want.TaskName = name
		e.sameExec("History of a batch start", e.exec(name, x.ID), want)
	}
	if res[0].Err == nil && res[2].Err == nil && res[0].Execution.ID == res[2].Execution.ID {
		e.t.Errorf("two starts share execution id %d", res[0].Execution.ID)
	}
	for _, name := range []string{"b", "c"} {
		if xs := e.history(name, repository.HistoryFilter{}); len(xs) != 0 {
			e.t.Errorf("lost start of %s wrote executions %v", name, execIDs(xs))
		}
	}
}
