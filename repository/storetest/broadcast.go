package storetest

import (
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Broadcast tasks (TaskOptions.Broadcast): every node records and runs
// each fire itself (StartBroadcast), and the running rows of dead nodes
// are closed by a peer (AbandonBroadcasts).
var broadcastCases = []testCase{
	{"StartPerNode", testBroadcastStartPerNode},
	{"StartRefused", testBroadcastStartRefused},
	{"EndRun", testBroadcastEndRun},
	{"AbandonDead", testBroadcastAbandonDead},
}

// broadcastTask inserts a pending broadcast task named name whose next
// fire is next.
func (e *env) broadcastTask(name string, next time.Time) repository.Task {
	e.t.Helper()
	d := def(name, next)
	d.Options.Broadcast = true
	t := e.upsert(d)[0]
	if !t.Options.Broadcast {
		e.t.Fatalf("task %q: Options.Broadcast not stored", name)
	}
	return t
}

// bstart is the StartBroadcast of t's fire at fire on node.
func (e *env) bstart(t repository.Task, node repository.NodeID, fire, next time.Time) (repository.Execution, error) {
	return e.s.StartBroadcast(e.ctx, repository.BroadcastStart{Task: t.ID, Node: node, ScheduledAt: fire, Revision: t.Revision, Next: next})
}

// Each node records its own running row of a fire, of kind cron at
// attempt 1; a second start of the same (node, fire) records nothing;
// the row's next fire moves on to the later Next without a version
// change, and never back.
func testBroadcastStartPerNode(e *env) {
	a, b := e.node("a"), e.node("b")
	now := e.now()
	fire := now.Truncate(time.Second).Add(-time.Second)
	t := e.broadcastTask("all", fire)
	xa, err := e.bstart(t, a.ID, fire, fire.Add(5*time.Second))
	if err != nil {
		e.t.Fatalf("StartBroadcast on a: %v", err)
	}
	xb, err := e.bstart(t, b.ID, fire, fire.Add(5*time.Second))
	if err != nil {
		e.t.Fatalf("StartBroadcast on b: %v", err)
	}
	for _, x := range []repository.Execution{xa, xb} {
		if x.ID == 0 || x.Status != repository.ExecRunning || x.Kind != repository.RunCron || x.Attempt != 1 || x.Batch != 0 ||
			!x.ScheduledAt.Equal(fire) || x.TaskID != t.ID || x.StartedAt.IsZero() || x.Revision != t.Revision {
			e.t.Errorf("broadcast start = %+v", x)
		}
	}
	if xa.NodeID != a.ID || xb.NodeID != b.ID || xa.ID == xb.ID {
		e.t.Errorf("starts of a and b: %+v, %+v", xa, xb)
	}
	if _, err := e.bstart(t, a.ID, fire, fire.Add(5*time.Second)); !errors.Is(err, repository.ErrBroadcastNotStarted) {
		e.t.Errorf("second start of one (node, fire): %v, want ErrBroadcastNotStarted", err)
	}
	if xs := e.history("all", repository.HistoryFilter{Fire: fire}); len(xs) != 2 {
		e.t.Errorf("rows of the fire: %d, want one per node (2)", len(xs))
	}
	got := e.task("all")
	if !got.NextStartTime.Equal(fire.Add(5*time.Second)) || got.Version != t.Version || got.Status != repository.TaskPending || got.NodeID != 0 {
		e.t.Errorf("task after the starts: next %v (want %v), version %d (was %d), status %s, node %d",
			got.NextStartTime, fire.Add(5*time.Second), got.Version, t.Version, got.Status, got.NodeID)
	}
	// An earlier Next (a slow node's) and no Next leave it.
	if _, err := e.bstart(t, a.ID, fire.Add(-time.Second), fire); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.bstart(t, a.ID, fire.Add(-2*time.Second), time.Time{}); err != nil {
		e.t.Fatal(err)
	}
	if got := e.task("all"); !got.NextStartTime.Equal(fire.Add(5*time.Second)) || got.Version != t.Version {
		e.t.Errorf("next after earlier starts: %v, version %d; want %v, %d", got.NextStartTime, got.Version, fire.Add(5*time.Second), t.Version)
	}
}

// A paused, rescheduled (another revision) or removed task starts
// nothing; a resumed one starts again.
func testBroadcastStartRefused(e *env) {
	a := e.node("a")
	fire := e.now().Truncate(time.Second)
	t := e.broadcastTask("all", fire)
	e.do("pause", e.s.Pause, "all")
	if _, err := e.bstart(t, a.ID, fire, time.Time{}); !errors.Is(err, repository.ErrBroadcastNotStarted) {
		e.t.Errorf("start of a paused task: %v, want ErrBroadcastNotStarted", err)
	}
	e.do("resume", e.s.Resume, "all")
	t = e.task("all")
	if _, err := e.bstart(t, a.ID, fire, time.Time{}); err != nil {
		e.t.Errorf("start after resume: %v", err)
	}
	stale := t
	t = e.override("all", cronB, fire.Add(time.Minute))
	if t.Revision == stale.Revision {
		e.t.Fatalf("Reschedule kept revision %d", t.Revision)
	}
	if _, err := e.bstart(stale, a.ID, fire.Add(time.Second), time.Time{}); !errors.Is(err, repository.ErrBroadcastNotStarted) {
		e.t.Errorf("start at an old revision: %v, want ErrBroadcastNotStarted", err)
	}
	if _, err := e.bstart(t, a.ID, fire.Add(time.Second), time.Time{}); err != nil {
		e.t.Errorf("start at the new revision: %v", err)
	}
	e.remove("all", repository.Removal{KeepHistory: true})
	if _, err := e.bstart(t, a.ID, fire.Add(2*time.Second), time.Time{}); !errors.Is(err, repository.ErrBroadcastNotStarted) {
		e.t.Errorf("start of a removed task: %v, want ErrBroadcastNotStarted", err)
	}
}

// EndRun closes a broadcast run by its start key; the task's last status
// follows, without a version change.
func testBroadcastEndRun(e *env) {
	a := e.node("a")
	fire := e.now().Truncate(time.Second)
	t := e.broadcastTask("all", fire)
	x, err := e.bstart(t, a.ID, fire, time.Time{})
	if err != nil {
		e.t.Fatal(err)
	}
	err = e.s.EndRun(e.ctx, repository.RunEnd{
		Task: t.ID, Node: a.ID, Run: repository.Execution{ScheduledAt: fire, Attempt: 1, Kind: repository.RunCron},
		Started: x.StartedAt, Ran: time.Millisecond, Status: repository.ExecFailed, Error: "boom",
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if got := e.exec("all", x.ID); got.Status != repository.ExecFailed || got.Error != "boom" || got.FinishedAt.IsZero() {
		e.t.Errorf("ended run = %+v", got)
	}
	if got := e.task("all"); got.LastStatus != repository.ExecFailed || got.Failures != 1 || got.Version != t.Version {
		e.t.Errorf("task after the end: last %s, failures %d, version %d (was %d)", got.LastStatus, got.Failures, got.Version, t.Version)
	}
}

// The running broadcast rows of a node that stopped heartbeating, or
// whose row is gone, are abandoned; a live node's, an ended run and the
// runs of a task that is not broadcast are not. A second pass finds
// nothing.
func testBroadcastAbandonDead(e *env) {
	silent, gone := e.node("silent"), e.node("gone")
	fire := e.now().Truncate(time.Second)
	t := e.broadcastTask("all", fire)
	xs, err := e.bstart(t, silent.ID, fire, time.Time{})
	if err != nil {
		e.t.Fatal(err)
	}
	xg, err := e.bstart(t, gone.ID, fire, time.Time{})
	if err != nil {
		e.t.Fatal(err)
	}
	ended, err := e.bstart(t, silent.ID, fire.Add(-time.Second), time.Time{})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.EndRun(e.ctx, repository.RunEnd{
		Task: t.ID, Node: silent.ID, Run: repository.Execution{ScheduledAt: ended.ScheduledAt, Attempt: 1, Kind: repository.RunCron},
		Ran: time.Millisecond, Status: repository.ExecSucceeded,
	}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.DeleteNode(e.ctx, gone.ID); err != nil {
		e.t.Fatal(err)
	}
	// A plain task's running row of the silent node is recovery's, not this.
	plain := e.claimed("plain", silent.ID)
	runPlain := e.start(plain)
	e.waitPast(silent.HeartbeatAt.Add(2 * slack))
	live := e.node("live")
	xl, err := e.bstart(t, live.ID, fire, time.Time{})
	if err != nil {
		e.t.Fatal(err)
	}
	k, err := e.s.AbandonBroadcasts(e.ctx, e.g, slack)
	if err != nil {
		e.t.Fatal(err)
	}
	if k != 2 {
		e.t.Errorf("AbandonBroadcasts = %d, want 2 (the silent and the gone node's)", k)
	}
	for _, x := range []repository.Execution{xs, xg} {
		if got := e.exec("all", x.ID); got.Status != repository.ExecAbandoned || got.FinishedAt.IsZero() || got.Error != repository.BroadcastAbandoned {
			e.t.Errorf("dead node %d's run = %+v, want abandoned", x.NodeID, got)
		}
	}
	if got := e.exec("all", xl.ID); got.Status != repository.ExecRunning {
		e.t.Errorf("live node's run = %s, want running", got.Status)
	}
	if got := e.exec("all", ended.ID); got.Status != repository.ExecSucceeded {
		e.t.Errorf("ended run = %s, want succeeded", got.Status)
	}
	if got := e.exec("plain", runPlain.ID); got.Status != repository.ExecRunning {
		e.t.Errorf("plain task's run = %s, want running", got.Status)
	}
	if got := e.task("all"); got.Version != t.Version {
		e.t.Errorf("task version %d after AbandonBroadcasts, want %d", got.Version, t.Version)
	}
	if k, err := e.s.AbandonBroadcasts(e.ctx, e.g, slack); err != nil || k != 0 {
		e.t.Errorf("second AbandonBroadcasts = %d, %v; want 0", k, err)
	}
	// The dead node's own end, if it comes back, replaces the abandoned row.
	if err := e.s.EndRun(e.ctx, repository.RunEnd{
		Task: t.ID, Node: silent.ID, Run: repository.Execution{ScheduledAt: fire, Attempt: 1, Kind: repository.RunCron},
		Ran: time.Millisecond, Status: repository.ExecSucceeded,
	}); err != nil {
		e.t.Fatal(err)
	}
	if got := e.exec("all", xs.ID); got.Status != repository.ExecSucceeded {
		e.t.Errorf("the returning node's end: %s, want succeeded", got.Status)
	}
}
