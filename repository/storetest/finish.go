package storetest

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var finishCases = []testCase{
	{"Empty", testFinishEmpty},
	{"ConsecutiveFailures", testFinishFailures},
	{"PauseAfterFailures", testFinishPausesFailing},
	{"Reschedule", testFinishReschedule},
	{"Keep", testFinishKeep},
	{"Done", testFinishDone},
	{"TriggerRequested", testFinishTriggerRequested},
	{"CronChanged", testFinishCronChanged},
	{"CronChangedWhilePaused", testFinishCronChangedPaused},
	{"Paused", testFinishPaused},
	{"DoneBeatsTrigger", testFinishDoneBeatsTrigger},
	{"TriggerBeatsRest", testFinishTriggerBeatsRest},
	{"StaleVersion", testFinishStale},
	{"AfterRecover", testFinishAfterRecover},
	{"Twice", testFinishTwice},
	{"BatchMixed", testFinishBatchMixed},
	{"Withdraw", testFinishWithdraw},
	{"WithdrawFenced", testFinishWithdrawFenced},
}

// testFinishWithdraw: a fire given back before its job began (Withdraw)
// goes back pending at the same fire, its start record deleted and the
// task's last outcome untouched; the same node claims it again and its
// run is recorded under the same start key, once.
func testFinishWithdraw(e *env) {
	node := e.node("worker")
	held := e.claimed("job", node.ID)
	fire := held.NextStartTime
	x, err := e.s.StartExecution(e.ctx, held.Claim(), repository.Execution{ScheduledAt: fire, Attempt: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	got := e.finishHeld(repository.Finish{
		Claim: held.Claim(), Revision: held.Revision, ExecutionID: x.ID, Status: repository.ExecGoesOn, Withdraw: true,
		Next: fire, NextAttempt: 1, Cron: held.Cron, Handoff: true,
	})
	if got.Status != repository.TaskPending || !got.NextStartTime.Equal(fire) || got.NodeID != 0 || got.LastStatus != held.LastStatus {
		e.t.Fatalf("after a withdraw: %+v; want pending at %s, unclaimed, last status %q", got, fire, held.LastStatus)
	}
	if h := e.history("job", repository.HistoryFilter{}); len(h) != 0 {
		e.t.Fatalf("history after a withdraw: %+v; want none (the job never began)", h)
	}
	again := e.claim(node.ID, got)[0]
	y, err := e.s.StartExecution(e.ctx, again.Claim(), repository.Execution{ScheduledAt: fire, Attempt: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	if y.Status != repository.ExecRunning {
		e.t.Fatalf("the run after a withdraw starts as %q; want running", y.Status)
	}
	e.finishHeld(keep(again, y.ID, repository.ExecSucceeded))
	h := e.history("job", repository.HistoryFilter{})
	if len(h) != 1 || h[0].Status != repository.ExecSucceeded || !h[0].ScheduledAt.Equal(fire) {
		e.t.Fatalf("history: %+v; want the one succeeded run of %s", h, fire)
	}
}

// testFinishWithdrawFenced: a give-back written late, after its node was
// recovered, deletes the abandoned start record (the fire never ran), but
// not a record the same node reopened meanwhile for the run it made of
// that fire: the row then belongs to that run.
func testFinishWithdrawFenced(e *env) {
	node := e.node("worker")
	withdraw := func(held repository.Task, x int64) {
		res := e.finish(repository.Finish{
			Claim: held.Claim(), Revision: held.Revision, ExecutionID: x, Status: repository.ExecGoesOn, Withdraw: true,
			Next: held.NextStartTime, NextAttempt: 1, Cron: held.Cron, Handoff: true,
		})[0]
		e.wantErr("a withdraw after recovery", res.Err, repository.ErrClaimLost, "")
	}
	start := func(held repository.Task) repository.Execution {
		x, err := e.s.StartExecution(e.ctx, held.Claim(), repository.Execution{ScheduledAt: held.NextStartTime, Attempt: 1})
		if err != nil {
			e.t.Fatal(err)
		}
		return x
	}
	recovered := func(held repository.Task) repository.Task {
		if err := e.recover(repository.Recovery{Ref: held.Ref(), DeadNode: node.ID}); err != nil {
			e.t.Fatal(err)
		}
		return e.task(held.Name)
	}

	// Recovered, not reopened: the late withdrawal deletes the record.
	held := e.claimed("gone", node.ID)
	x := start(held)
	recovered(held)
	withdraw(held, x.ID)
	if h := e.history("gone", repository.HistoryFilter{}); len(h) != 0 {
		e.t.Fatalf("history after a late withdraw: %+v; want none (the fire never ran)", h)
	}

	// Recovered, then claimed again and its record reopened by the same
	// node: the late withdrawal leaves the run's record alone.
	held = e.claimed("job", node.ID)
	x = start(held)
	again := e.claim(node.ID, recovered(held))[0]
	y := start(again)
	if y.ID != x.ID || y.Status != repository.ExecRunning {
		e.t.Fatalf("the run after recovery started %+v; want record %d reopened as running", y, x.ID)
	}
	withdraw(held, x.ID)
	if got := e.exec("job", x.ID); got.Status != repository.ExecRunning {
		e.t.Fatalf("the reopened record after a late withdraw: %s; want running", got.Status)
	}
	e.finishHeld(keep(again, y.ID, repository.ExecSucceeded))
	h := e.history("job", repository.HistoryFilter{})
	if len(h) != 1 || h[0].Status != repository.ExecSucceeded {
		e.t.Fatalf("history: %+v; want the one succeeded run", h)
	}
}

// fired is one fire of a fresh task finished under test.
type fired struct {
	held          repository.Task // the row just before the finish
	got           repository.Task // the row the finish wrote
	f             repository.Finish
	x             repository.Execution
	before, after time.Time // store-clock bounds of the finish
}

// fire claims a fresh task, starts its execution, lets during act on it
// while it runs (operator actions), then finishes it with the Finish mk
// builds from the claim it holds. The finish must hold the fence.
func (e *env) fire(during func(), mk func(held repository.Task, x int64) repository.Finish) fired {
	e.t.Helper()
	node := e.node("worker")
	held := e.claimed("job", node.ID)
	x := e.start(held)
	if during != nil {
		during()
	}
	held = e.task("job")
	if held.Status != repository.TaskDoing || held.NodeID != node.ID {
		e.t.Fatalf("operator actions broke the claim: %+v", held)
	}
	f := mk(held, x.ID)
	fd := fired{held: held, f: f, x: x, before: e.now()}
	fd.got = e.finishHeld(f)
	fd.after = e.now()
	e.sameTask("stored row after finish", e.task("job"), fd.got)
	return fd
}

// common returns the row every held finish writes before the branch:
// version+1 and the last result at the store's now.
func (e *env) common(fd fired) repository.Task {
	e.t.Helper()
	want := fd.held
	want.Version++
	want.LastStatus, want.LastError = fd.f.Status, fd.f.Error
	switch fd.f.Status {
	case repository.ExecFailed, repository.ExecTimedOut:
		want.Failures++
	case repository.ExecSucceeded:
		want.Failures = 0
	}
	e.within("last_finished_at", fd.got.LastFinishedAt, fd.before, fd.after)
	want.LastFinishedAt, want.UpdatedAt = fd.got.LastFinishedAt, fd.got.LastFinishedAt
	// The execution closes with the finish's status at the same now.
	x := e.exec("job", fd.x.ID)
	wantX := fd.x
	wantX.TaskName, wantX.Status, wantX.Error, wantX.FinishedAt = "job", fd.f.Status, fd.f.Error, fd.got.LastFinishedAt
	e.sameExec("closed execution", x, wantX)
	return want
}

func finishWith(st repository.ExecStatus, errText string, tweak func(*repository.Finish)) func(repository.Task, int64) repository.Finish {
	return func(held repository.Task, x int64) repository.Finish {
		f := repository.Finish{
			Claim: held.Claim(), Revision: held.Revision, ExecutionID: x, Status: st, Error: errText,
			Next: held.NextStartTime.Add(time.Minute + 1500), NextAttempt: 3, Cron: cronA,
		}
		if tweak != nil {
			tweak(&f)
		}
		return f
	}
}

func (e *env) pause()   { e.control(e.s.Pause) }
func (e *env) trigger() { e.control(e.triggerOp) }
func (e *env) control(op func(ctx context.Context, group, name string) (repository.Task, error)) {
	e.t.Helper()
	if _, err := op(e.ctx, e.g, "job"); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) reschedule(cron string, next time.Time) {
	e.t.Helper()
	if _, err := e.s.Reschedule(e.ctx, e.g, "job", cron, []time.Time{next}); err != nil {
		e.t.Fatal(err)
	}
}

func testFinishEmpty(e *env) {
	res, err := e.s.Finish(e.ctx, nil)
	if err != nil || res != nil {
		e.t.Errorf("Finish(nil) = %v, %v; want nil, nil", res, err)
	}
}

func testFinishReschedule(e *env) {
	fd := e.fire(nil, finishWith(repository.ExecFailed, "boom", nil))
	want := e.common(fd)
	want.Status, want.NodeID = repository.TaskPending, 0
	want.NextStartTime, want.Attempt = micro(fd.f.Next), 3
	e.sameTask("plain finish", fd.got, want)
}

func testFinishKeep(e *env) {
	fd := e.fire(nil, finishWith(repository.ExecSucceeded, "", func(f *repository.Finish) { f.Keep = true }))
	want := e.common(fd)
	want.NextStartTime, want.Attempt = micro(fd.f.Next), 3
	e.sameTask("finish keeping the claim", fd.got, want)
	// The kept claim is the new fence; the old one is lost.
	e.start(fd.got)
	_, err := e.s.StartExecution(e.ctx, fd.held.Claim(), repository.Execution{ScheduledAt: fd.held.NextStartTime, Attempt: 1})
	e.wantErr("start under the pre-finish claim", err, repository.ErrClaimLost, "")
}

func testFinishDone(e *env) {
	fd := e.fire(nil, finishWith(repository.ExecSucceeded, "", func(f *repository.Finish) { f.Done, f.Keep = true, true }))
	want := e.common(fd)
	want.Status, want.NodeID = repository.TaskFinished, 0
	fd.got.NextStartTime, fd.got.Attempt = want.NextStartTime, want.Attempt // not specified for Done
	e.sameTask("done", fd.got, want)
}

func testFinishTriggerRequested(e *env) {
	fd := e.fire(e.trigger, finishWith(repository.ExecSucceeded, "", func(f *repository.Finish) { f.Keep = true }))
	if !fd.held.TriggerRequested {
		e.t.Fatalf("Trigger on a doing row did not set trigger_requested: %+v", fd.held)
	}
	want := e.common(fd)
	want.Status, want.NodeID = repository.TaskPending, 0
	want.NextStartTime, want.Attempt, want.TriggerRequested, want.FireKind = fd.got.LastFinishedAt, 1, false, repository.RunManual
	e.sameTask("finish of a triggered fire", fd.got, want)
}

func testFinishCronChanged(e *env) {
	var next time.Time
	fd := e.fire(func() {
		next = e.now().Add(time.Hour)
		e.reschedule(cronB, next)
	}, finishWith(repository.ExecSucceeded, "", func(f *repository.Finish) { f.Keep = true }))
	want := e.common(fd)
	want.Status, want.NodeID = repository.TaskPending, 0
	want.NextStartTime, want.Attempt = micro(next), 1 // the row's own next fire wins
	e.sameTask("finish after a reschedule", fd.got, want)
}

func testFinishCronChangedPaused(e *env) {
	var next time.Time
	fd := e.fire(func() {
		next = e.now().Add(time.Hour)
		e.reschedule(cronB, next)
		e.pause()
	}, finishWith(repository.ExecSucceeded, "", func(f *repository.Finish) { f.Keep = true }))
	want := e.common(fd)
	want.Status, want.NodeID = repository.TaskPaused, 0
	want.NextStartTime, want.Attempt = micro(next), 1
	e.sameTask("finish after a reschedule and a pause", fd.got, want)
}

func testFinishPaused(e *env) {
	fd := e.fire(e.pause, finishWith(repository.ExecTimedOut, "deadline", func(f *repository.Finish) { f.Keep = true }))
	if !fd.held.Paused {
		e.t.Fatalf("Pause on a doing row did not set the flag: %+v", fd.held)
	}
	want := e.common(fd)
	want.Status, want.NodeID = repository.TaskPaused, 0
	want.NextStartTime, want.Attempt = micro(fd.f.Next), 3
	e.sameTask("finish of a paused fire", fd.got, want)
}

func testFinishDoneBeatsTrigger(e *env) {
	fd := e.fire(func() { e.trigger(); e.pause() },
		finishWith(repository.ExecSucceeded, "", func(f *repository.Finish) { f.Done, f.Keep = true, true }))
	if fd.got.Status != repository.TaskFinished || fd.got.NodeID != 0 {
		e.t.Errorf("Done with trigger and pause pending = %+v, want finished, node 0", fd.got)
	}
	if fd.got.Version != fd.held.Version+1 {
		e.t.Errorf("version %d, want %d", fd.got.Version, fd.held.Version+1)
	}
}

func testFinishTriggerBeatsRest(e *env) {
	fd := e.fire(func() {
		e.reschedule(cronB, e.now().Add(time.Hour))
		e.pause()
		e.trigger()
	}, finishWith(repository.ExecFailed, "x", func(f *repository.Finish) { f.Keep = true }))
	want := e.common(fd)
	want.Status, want.NodeID = repository.TaskPending, 0 // runs once, paused flag kept
	want.NextStartTime, want.Attempt, want.TriggerRequested, want.FireKind = fd.got.LastFinishedAt, 1, false, repository.RunManual
	e.sameTask("triggered beats rescheduled, paused and keep", fd.got, want)
	if !fd.got.Paused {
		e.t.Errorf("paused flag lost")
	}
}

// A finish with a stale version affects nothing, reports ErrClaimLost and
// closes its execution as fenced.
func testFinishStale(e *env) {
	node := e.node("n")
	held := e.claimed("job", node.ID)
	x := e.start(held)
	if n, err := e.s.Release(e.ctx, []repository.Claim{held.Claim()}); err != nil || n != 1 {
		e.t.Fatalf("Release = %d, %v", n, err)
	}
	current := e.claim(node.ID, e.task("job"))[0] // same node, newer version
	before := e.now()
	res := e.finish(repository.Finish{
		Claim: held.Claim(), Revision: held.Revision, ExecutionID: x.ID, Status: repository.ExecSucceeded, Error: "late",
		Next: held.NextStartTime.Add(time.Minute), NextAttempt: 1, Cron: cronA, Keep: true,
	})[0]
	after := e.now()
	e.wantErr("stale finish", res.Err, repository.ErrClaimLost, "")
	e.sameTask("row after a stale finish", e.task("job"), current)
	got := e.exec("job", x.ID)
	e.within("fenced finished_at", got.FinishedAt, before, after)
	want := x
	want.TaskName, want.Status, want.Error, want.FinishedAt = "job", repository.ExecFenced, "late", got.FinishedAt
	e.sameExec("execution of a stale finish", got, want)

	// Wrong node, right version: lost as well.
	y := e.start(current)
	other := e.node("m")
	res = e.finish(repository.Finish{
		Claim: repository.Claim{ID: current.ID, Version: current.Version, NodeID: other.ID}, ExecutionID: y.ID,
		Status: repository.ExecSucceeded, Next: held.NextStartTime.Add(time.Minute), NextAttempt: 1, Cron: cronA,
	})[0]
	e.wantErr("finish by another node", res.Err, repository.ErrClaimLost, "")
	e.sameTask("row after a foreign finish", e.task("job"), current)
}

// Recover abandons the execution; the dead node's late finish is fenced.
func testFinishAfterRecover(e *env) {
	node := e.node("n")
	held := e.claimed("job", node.ID)
	x := e.start(held)
	if err := e.recover(repository.Recovery{Ref: held.Ref(), DeadNode: node.ID}); err != nil {
		e.t.Fatal(err)
	}
	if got := e.exec("job", x.ID); got.Status != repository.ExecAbandoned {
		e.t.Fatalf("execution after Recover = %s, want abandoned", got.Status)
	}
	recovered := e.task("job")
	res := e.finish(repository.Finish{
		Claim: held.Claim(), Revision: held.Revision, ExecutionID: x.ID, Status: repository.ExecSucceeded, Error: "",
		Next: held.NextStartTime.Add(time.Minute), NextAttempt: 1, Cron: cronA,
	})[0]
	e.wantErr("finish after recovery", res.Err, repository.ErrClaimLost, "")
	e.sameTask("row after a fenced finish", e.task("job"), recovered)
	if got := e.exec("job", x.ID); got.Status != repository.ExecFenced {
		e.t.Errorf("abandoned execution finished late = %s, want fenced", got.Status)
	}
}

// A repeated finish is lost and does not reopen the closed execution.
func testFinishTwice(e *env) {
	node := e.node("n")
	held := e.claimed("job", node.ID)
	x := e.start(held)
	f := repository.Finish{Claim: held.Claim(), Revision: held.Revision, ExecutionID: x.ID, Status: repository.ExecSucceeded,
		Next: held.NextStartTime.Add(time.Minute), NextAttempt: 1, Cron: cronA}
	first := e.finishHeld(f)
	closed := e.exec("job", x.ID)
	f.Status, f.Error = repository.ExecFailed, "again"
	res := e.finish(f)[0]
	e.wantErr("second finish", res.Err, repository.ErrClaimLost, "")
	e.sameTask("row after a second finish", e.task("job"), first)
	e.sameExec("execution after a second finish", e.exec("job", x.ID), closed)
}

// One batch with held and lost fences: each entry is judged on its own.
func testFinishBatchMixed(e *env) {
	node := e.node("n")
	n := e.now()
	ts := e.upsert(def("job1", n), def("job2", n), def("job3", n), def("job4", n), def("job5", n))
	held := e.claim(node.ID, ts...)
	xs := make([]repository.Execution, len(held))
	for i := range held[:4] {
		xs[i] = e.start(held[i])
	}
	// job2 released, job4 recovered by a peer: both fences lost.
	if r, err := e.s.Release(e.ctx, []repository.Claim{held[1].Claim()}); err != nil || r != 1 {
		e.t.Fatalf("Release = %d, %v", r, err)
	}
	if err := e.recover(repository.Recovery{Ref: held[3].Ref(), DeadNode: node.ID}); err != nil {
		e.t.Fatal(err)
	}
	lost2, lost4 := e.task("job2"), e.task("job4")
	mk := func(i int, st repository.ExecStatus) repository.Finish {
		return repository.Finish{Claim: held[i].Claim(), Revision: held[i].Revision, ExecutionID: xs[i].ID, Status: st, Error: fmt.Sprint("e", i),
			Next: n.Add(time.Duration(i+1) * time.Minute), NextAttempt: 1, Cron: cronA, Keep: i == 2}
	}
	batch := []repository.Finish{
		mk(2, repository.ExecSucceeded),
		mk(1, repository.ExecSucceeded),
		mk(0, repository.ExecFailed),
		mk(3, repository.ExecSucceeded),
		mk(4, repository.ExecSucceeded), // no execution row
	}
	res := e.finish(batch...)
	for i, wantLost := range []bool{false, true, false, true, false} {
		name := held[[]int{2, 1, 0, 3, 4}[i]].Name
		if wantLost {
			e.wantErr("batch entry "+name, res[i].Err, repository.ErrClaimLost, "")
			continue
		}
		if res[i].Err != nil {
			e.t.Errorf("batch entry %s: %v", name, res[i].Err)
			continue
		}
		if res[i].Task.Name != name || res[i].Task.Version != held[0].Version+1 || !res[i].Task.NextStartTime.Equal(micro(batch[i].Next)) {
			e.t.Errorf("batch entry %d = %+v, want %s at version %d next %v", i, res[i].Task, name, held[0].Version+1, batch[i].Next)
		}
		e.sameTask("stored "+name, e.task(name), res[i].Task)
	}
	if res[0].Err == nil && (res[0].Task.Status != repository.TaskDoing || res[0].Task.NodeID != node.ID) {
		e.t.Errorf("kept entry = %+v, want still doing", res[0].Task)
	}
	if res[2].Err == nil && res[2].Task.Status != repository.TaskPending {
		e.t.Errorf("plain entry = %+v, want pending", res[2].Task)
	}
	e.sameTask("lost job2 untouched", e.task("job2"), lost2)
	e.sameTask("lost job4 untouched", e.task("job4"), lost4)
	for i, want := range []repository.ExecStatus{repository.ExecFailed, repository.ExecFenced, repository.ExecSucceeded, repository.ExecFenced} {
		got := e.exec(held[i].Name, xs[i].ID)
		if got.Status != want || got.FinishedAt.IsZero() || got.Error != fmt.Sprint("e", i) {
			e.t.Errorf("execution of %s = %+v, want %s, finished, error e%d", held[i].Name, got, want, i)
		}
	}
}

// testFinishFailures: a finish counts the task's runs that failed or timed
// out in a row, a success resets the count, a skipped fire leaves it.
func testFinishFailures(e *env) {
	node := e.node("n")
	t := e.claimed("flaky", node.ID)
	for i, c := range []struct {
		st   repository.ExecStatus
		want int
	}{
		{repository.ExecFailed, 1}, {repository.ExecTimedOut, 2}, {repository.ExecSkipped, 2},
		{repository.ExecFailed, 3}, {repository.ExecSucceeded, 0}, {repository.ExecFailed, 1},
	} {
		t, _ = e.runOnce(t, c.st)
		if t.Failures != c.want {
			e.t.Fatalf("run %d (%s): failures %d, want %d", i+1, c.st, t.Failures, c.want)
		}
	}
	if got := e.task("flaky").Failures; got != 1 {
		e.t.Errorf("the row read again counts %d failures, want 1", got)
	}
}

// testFinishPausesFailing: a finish with Pause (the node's call: its
// failure makes the failures in a row reach TaskOptions.PauseAfter) parks
// the task paused though it asked to keep the claim, and records the
// pause in the audit log, by the claimer, via "node".
func testFinishPausesFailing(e *env) {
	node := e.node("n")
	t := e.claimed("fragile", node.ID)
	t, _ = e.runOnce(t, repository.ExecFailed)
	if t.Status != repository.TaskDoing || t.Paused {
		e.t.Fatalf("after one failure: %s paused=%v, want still doing", t.Status, t.Paused)
	}
	f := keep(t, e.start(t).ID, repository.ExecTimedOut)
	f.Pause = true // the node's call: this failure reaches the task's PauseAfter
	t = e.finishHeld(f)
	if t.Status != repository.TaskPaused || !t.Paused || t.NodeID != 0 || t.Failures != 2 {
		e.t.Fatalf("after the second failure: %s paused=%v node=%d failures=%d, want paused, unclaimed, 2", t.Status, t.Paused, t.NodeID, t.Failures)
	}
	log := e.audit(repository.AuditFilter{Task: "fragile"})
	if len(log) != 1 || log[0].Action != "pause" || log[0].Via != "node" || log[0].Name != fmt.Sprintf("node %d", node.ID) ||
		log[0].Detail != "after 2 failed runs in a row (the last: )" {
		e.t.Errorf("audit = %+v, want one pause by node %d", log, node.ID)
	}
}
