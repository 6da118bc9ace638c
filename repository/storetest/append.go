package storetest

import (
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// A short run has no start record: its finish appends the execution
// (Finish.Run), once, fenced like the rest; recovery gives a fire a dead
// node may have been running an abandoned row.
var appendCases = []testCase{
	{"FinishAppendsRun", testFinishAppendsRun},
	{"FinishAppendsFenced", testFinishAppendsFenced},
	{"RecoverAbandonsUnrecordedFire", testRecoverAbandonsUnrecorded},
	{"RecoverDelayedFire", testRecoverDelayedFire},
	{"FinishMeasuredTimes", testFinishMeasuredTimes},
}

// appended is a keep finish of held that appends its run.
func appended(held repository.Task, st repository.ExecStatus, ran time.Duration) repository.Finish {
	f := keep(held, 0, st)
	f.Run = &repository.Execution{ScheduledAt: held.NextStartTime, Attempt: held.Attempt, Misfire: repository.MisfireFireOnceNow}
	f.Ran = ran
	return f
}

func testFinishAppendsRun(e *env) {
	node := e.node("worker")
	held := e.claimed("job", node.ID)
	f := appended(held, repository.ExecSucceeded, 2*time.Second)
	before := e.now()
	e.finishHeld(f)
	after := e.now()
	xs := e.history("job", repository.HistoryFilter{})
	if len(xs) != 1 {
		e.t.Fatalf("history after one appended run = %d rows, want 1: %+v", len(xs), xs)
	}
	x := xs[0]
	e.within("appended finished_at", x.FinishedAt, before, after)
	if d := x.FinishedAt.Sub(x.StartedAt); d < 2*time.Second-time.Millisecond || d > 2*time.Second+time.Millisecond {
		e.t.Errorf("appended run lasted %v, want the 2s it ran", d)
	}
	want := repository.Execution{
		ID: x.ID, TaskID: held.ID, TaskName: "job", NodeID: node.ID, ScheduledAt: held.NextStartTime,
		StartedAt: x.StartedAt, FinishedAt: x.FinishedAt, Status: repository.ExecSucceeded,
		Attempt: max(held.Attempt, 1), Misfire: repository.MisfireFireOnceNow,
	}
	e.sameExec("appended run", x, want)

	// The same finish again (its first reply lost): fenced, no second row,
	// the first outcome kept.
	r := e.finish(f)[0]
	e.wantErr("retried appending finish", r.Err, repository.ErrClaimLost, "")
	if xs := e.history("job", repository.HistoryFilter{}); len(xs) != 1 || xs[0].Status != repository.ExecSucceeded {
		e.t.Errorf("history after the retry = %+v, want the one succeeded row", xs)
	}
}

func testFinishAppendsFenced(e *env) {
	node := e.node("worker")
	held := e.claimed("job", node.ID)
	if n, err := e.s.Release(e.ctx, []repository.Claim{held.Claim()}); err != nil || n != 1 {
		e.t.Fatalf("Release = %d, %v", n, err)
	}
	r := e.finish(appended(held, repository.ExecSucceeded, time.Millisecond))[0]
	e.wantErr("appending finish of a lost claim", r.Err, repository.ErrClaimLost, "")
	xs := e.history("job", repository.HistoryFilter{})
	if len(xs) != 1 || xs[0].Status != repository.ExecFenced || xs[0].NodeID != node.ID {
		e.t.Fatalf("history = %+v, want one fenced row of node %d", xs, node.ID)
	}
	e.finish(appended(held, repository.ExecSucceeded, time.Millisecond)) // the same finish again (a reply lost)
	if xs := e.history("job", repository.HistoryFilter{}); len(xs) != 1 {
		e.t.Fatalf("a retried fenced finish: history = %+v, want its one fenced row", xs)
	}

	// The same node claims the fire again and runs it before the lost
	// claim's finish arrives: both runs happened, both are recorded.
	t2 := e.claimed("twice", node.ID)
	if _, err := e.s.Release(e.ctx, []repository.Claim{t2.Claim()}); err != nil {
		e.t.Fatal(err)
	}
	t3 := e.claim(node.ID, e.task("twice"))[0]
	if !t3.NextStartTime.Equal(t2.NextStartTime) {
		e.t.Fatalf("re-claimed fire %v, want the released one %v", t3.NextStartTime, t2.NextStartTime)
	}
	second := appended(t3, repository.ExecSucceeded, time.Millisecond)
	second.Started = e.now().Add(-time.Millisecond)
	if r := e.finish(second)[0]; r.Err != nil {
		e.t.Fatal(r.Err)
	}
	first := appended(t2, repository.ExecFailed, time.Millisecond)
	first.Started = second.Started.Add(-time.Second)
	for range 2 { // the second time a retry: no second fenced row
		if r := e.finish(first)[0]; !errors.Is(r.Err, repository.ErrClaimLost) {
			e.t.Fatalf("the first claim's late finish: %v, want ErrClaimLost", r.Err)
		}
	}
	got := map[repository.ExecStatus]int{}
	for _, x := range e.history("twice", repository.HistoryFilter{}) {
		got[x.Status]++
	}
	if got[repository.ExecSucceeded] != 1 || got[repository.ExecFenced] != 1 || len(got) != 2 {
		e.t.Errorf("runs of one fire by one node, the first fenced: %v, want one succeeded and one fenced", got)
	}
}

func testRecoverAbandonsUnrecorded(e *env) {
	dead := e.node("dead")
	// due a second ago, while the node heartbeated: it may have run.
	due := e.claimed("due", dead.ID)
	// due in an hour: the node was dead before it came due.
	later := e.claim(dead.ID, e.upsert(def("later", e.now().Add(time.Hour)))[0])[0]
	if _, err := e.s.Heartbeat(e.ctx, dead); err != nil {
		e.t.Fatal(err)
	}
	for _, t := range []repository.Task{due, later} {
		if err := e.recover(repository.Recovery{Ref: t.Ref(), DeadNode: dead.ID}); err != nil {
			e.t.Fatalf("recover %s: %v", t.Name, err)
		}
	}
	xs := e.history("due", repository.HistoryFilter{})
	if len(xs) != 1 || xs[0].Status != repository.ExecAbandoned || xs[0].NodeID != dead.ID ||
		!xs[0].ScheduledAt.Equal(due.NextStartTime) || xs[0].Attempt != max(due.Attempt, 1) {
		e.t.Fatalf("history of the due fire = %+v, want one abandoned row of node %d at %v", xs, dead.ID, due.NextStartTime)
	}
	if got := e.task("due"); got.LastStatus != repository.ExecAbandoned {
		e.t.Errorf("recovered due task's last status = %q, want abandoned", got.LastStatus)
	}
	if xs := e.history("later", repository.HistoryFilter{}); len(xs) != 0 {
		e.t.Errorf("a fire due after the node's last heartbeat got rows: %+v", xs)
	}
	// The zombie's late finish of the fire: fenced, recorded on that row.
	r := e.finish(appended(due, repository.ExecSucceeded, time.Millisecond))[0]
	e.wantErr("zombie's appending finish", r.Err, repository.ErrClaimLost, "")
	if xs := e.history("due", repository.HistoryFilter{}); len(xs) != 1 || xs[0].Status != repository.ExecFenced {
		e.t.Errorf("history after the zombie's finish = %+v, want its one row fenced", xs)
	}
}

// testFinishMeasuredTimes: a finish that carries when its job began and
// how long it ran (measured where it ran) writes those as the run's start
// and end, whether it appends the run or closes a recorded start: the
// history says how long the job took, not when its writes happened.
func testFinishMeasuredTimes(e *env) {
	node := e.node("worker")
	now := e.now().Truncate(time.Microsecond)

	held := e.claimed("short", node.ID)
	f := appended(held, repository.ExecSucceeded, 0)
	f.Started, f.Ran = now.Add(-3*time.Second), time.Second
	e.finishHeld(f)
	x := e.history("short", repository.HistoryFilter{})[0]
	if !x.StartedAt.Equal(f.Started) || !x.FinishedAt.Equal(f.Started.Add(f.Ran)) {
		e.t.Errorf("appended run: %v .. %v, want %v .. %v", x.StartedAt, x.FinishedAt, f.Started, f.Started.Add(f.Ran))
	}

	held = e.claimed("long", node.ID)
	started := e.start(held)
	f = keep(held, started.ID, repository.ExecSucceeded)
	f.Started, f.Ran = now.Add(-2*time.Second), 500*time.Millisecond
	e.finishHeld(f)
	x = e.exec("long", started.ID)
	if !x.StartedAt.Equal(f.Started) || !x.FinishedAt.Equal(f.Started.Add(f.Ran)) {
		e.t.Errorf("recorded run: %v .. %v, want %v .. %v", x.StartedAt, x.FinishedAt, f.Started, f.Started.Add(f.Ran))
	}
}

// testRecoverDelayedFire: a jittered fire (Recovery.Delay) whose delayed
// time had not come by the dead node's last heartbeat never started: no
// abandoned row, no abandoned last status.
func testRecoverDelayedFire(e *env) {
	dead := e.node("dead")
	due := e.claimed("jittered", dead.ID) // due a second ago
	if _, err := e.s.Heartbeat(e.ctx, dead); err != nil {
		e.t.Fatal(err)
	}
	if err := e.recover(repository.Recovery{Ref: due.Ref(), DeadNode: dead.ID, Delay: time.Hour}); err != nil {
		e.t.Fatalf("recover: %v", err)
	}
	if xs := e.history("jittered", repository.HistoryFilter{}); len(xs) != 0 {
		e.t.Errorf("a fire delayed past the dead node's last heartbeat got rows: %+v", xs)
	}
	if got := e.task("jittered"); got.LastStatus == repository.ExecAbandoned || got.Status != repository.TaskPending {
		e.t.Errorf("recovered row: %s, last status %q; want pending, not abandoned", got.Status, got.LastStatus)
	}
}
