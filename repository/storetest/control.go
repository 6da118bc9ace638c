package storetest

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var controlCases = []testCase{
	{"Pause", testPause},
	{"Resume", testResume},
	{"Trigger", testTrigger},
	{"Reschedule", testReschedule},
	{"RescheduleKeepsClaimedFire", testRescheduleKeepsClaimedFire},
	{"UnknownTask", testControlUnknown},
}

type controlOp func(ctx context.Context, group, name string) (repository.Task, error)

func (e *env) do(what string, op controlOp, name string) repository.Task {
	e.t.Helper()
	t, err := op(e.ctx, e.g, name)
	if err != nil {
		e.t.Fatalf("%s(%q): %v", what, name, err)
	}
	e.sameTask(what+" returns the stored row", t, e.task(name))
	return t
}

func testPause(e *env) {
	n := e.now()
	ts := e.upsert(def("pending", n), def("doing", n))
	node := e.node("n")
	doing := e.claim(node.ID, ts[1])[0]

	got := e.do("Pause", e.s.Pause, "pending")
	want := ts[0]
	want.Status, want.Paused = repository.TaskPaused, true
	want.Version++
	want.UpdatedAt = got.UpdatedAt
	e.sameTask("paused pending row", got, want)
	ids, _ := e.due(time.Hour, 0, "pending")
	e.wantDue("paused row", ids)
	if won, err := e.s.Claim(e.ctx, node.ID, []repository.TaskRef{got.Ref()}); err != nil || len(won) != 0 {
		e.t.Errorf("Claim of a paused row = %v, %v; want none", taskIDs(won), err)
	}
	again := e.do("Pause", e.s.Pause, "pending")
	if again.Status != repository.TaskPaused || !again.Paused || again.Version != got.Version {
		e.t.Errorf("second Pause = %+v, want paused at version %d", again, got.Version)
	}

	got = e.do("Pause", e.s.Pause, "doing")
	want = doing
	want.Paused = true
	want.UpdatedAt = got.UpdatedAt
	e.sameTask("paused doing row: flag only", got, want)
	e.start(got) // the claim still holds
}

func testResume(e *env) {
	n := e.now()
	ts := e.upsert(def("parked", n), def("doing", n))
	node := e.node("n")
	e.claim(node.ID, ts[1])
	parked := e.do("Pause", e.s.Pause, "parked")
	got := e.do("Resume", e.s.Resume, "parked")
	want := parked
	want.Status, want.Paused = repository.TaskPending, false
	want.Version++
	want.UpdatedAt = got.UpdatedAt
	e.sameTask("resumed paused row", got, want)
	ids, _ := e.due(0, 0, "parked")
	e.wantDue("resumed row is due", ids, got)

	paused := e.do("Pause", e.s.Pause, "doing")
	got = e.do("Resume", e.s.Resume, "doing")
	want = paused
	want.Paused = false
	want.UpdatedAt = got.UpdatedAt
	e.sameTask("resumed doing row: flag only", got, want)
	// Its finish keeps the claim as asked: the pause is gone.
	x := e.start(got)
	res := e.finishHeld(keep(got, x.ID, repository.ExecSucceeded))
	if res.Status != repository.TaskDoing || res.NodeID != node.ID {
		e.t.Errorf("finish after pause+resume = %+v, want still doing", res)
	}
}

func testTrigger(e *env) {
	n := e.now()
	fin := def("finished", n.Add(time.Hour))
	fin.Finished = true
	ts := e.upsert(def("pending", n.Add(time.Hour)), def("parked", n.Add(time.Hour)), fin, def("retrying", n), def("doing", n))
	node := e.node("n")

	// A pending retry (attempt 3) triggered starts over at attempt 1.
	r := e.claim(node.ID, ts[3])[0]
	r = e.finishHeld(repository.Finish{Claim: r.Claim(), Revision: r.Revision, Status: repository.ExecFailed, Next: n.Add(time.Hour), NextAttempt: 3, Cron: cronA})
	if r.Attempt != 3 {
		e.t.Fatalf("attempt after a failed finish = %d, want 3", r.Attempt)
	}
	parked := e.do("Pause", e.s.Pause, "parked")
	rows := map[string]repository.Task{"pending": ts[0], "parked": parked, "finished": ts[2], "retrying": r}
	for _, name := range []string{"pending", "parked", "finished", "retrying"} {
		before := e.now()
		got := e.do("Trigger", e.triggerOp, name)
		after := e.now()
		want := rows[name]
		want.Status, want.Attempt, want.FireKind = repository.TaskPending, 1, repository.RunManual
		want.Version++
		e.within("triggered next_start_time of "+name, got.NextStartTime, before, after)
		want.NextStartTime, want.UpdatedAt = got.NextStartTime, got.UpdatedAt
		e.sameTask("triggered "+name, got, want)
		rows[name] = got
	}
	ids, _ := e.due(0, 0, "pending", "parked", "finished", "retrying")
	if len(ids) != 4 {
		e.t.Errorf("triggered rows due now = %v, want all 4", ids)
	}

	// Triggered while paused: it runs once and parks again.
	p := e.claim(node.ID, rows["parked"])[0]
	x := e.start(p)
	next := e.now().Add(time.Minute)
	res := e.finishHeld(repository.Finish{Claim: p.Claim(), Revision: p.Revision, ExecutionID: x.ID, Status: repository.ExecSucceeded,
		Next: next, NextAttempt: 1, Cron: cronA, Keep: true})
	if res.Status != repository.TaskPaused || !res.Paused || !res.NextStartTime.Equal(micro(next)) || res.NodeID != 0 {
		e.t.Errorf("finish of a triggered paused task = %+v, want paused again at %v", res, micro(next))
	}

	// Doing: only the request flag.
	doing := e.claim(node.ID, ts[4])[0]
	got := e.do("Trigger", e.triggerOp, "doing")
	want := doing
	want.TriggerRequested = true
	want.UpdatedAt = got.UpdatedAt
	e.sameTask("triggered doing row", got, want)
	e.start(got) // the claim still holds
}

func testReschedule(e *env) {
	n := e.now()
	fin := def("finished", n)
	fin.Finished = true
	ts := e.upsert(def("pending", n), def("parked", n), fin, def("doing", n))
	node := e.node("n")
	doing := e.claim(node.ID, ts[3])[0]
	parked := e.do("Pause", e.s.Pause, "parked")
	rows := map[string]repository.Task{"pending": ts[0], "parked": parked, "finished": ts[2], "doing": doing}
	next := n.Add(2*time.Hour + 777)
	for _, name := range []string{"pending", "parked", "finished", "doing"} {
		got, err := e.s.Reschedule(e.ctx, e.g, name, cronB, []time.Time{next})
		if err != nil {
			e.t.Fatalf("Reschedule(%q): %v", name, err)
		}
		e.sameTask("Reschedule returns the stored row", got, e.task(name))
		want := rows[name]
		want.Cron, want.NextStartTime, want.UpdatedAt = cronB, micro(next), got.UpdatedAt
		want.OverriddenAt = got.UpdatedAt // another cron than the code's
		want.Revision++                   // an edit of the definition, doing or not
		switch name {
		case "doing": // no bump: its Finish sees the cron changed
		case "finished":
			want.Status = repository.TaskPending
			want.Version++
		default:
			want.Version++
		}
		e.sameTask("rescheduled "+name, got, want)
	}
	e.start(e.task("doing")) // the claim still holds
	_, err := e.s.Reschedule(e.ctx, e.g, "ghost", cronB, []time.Time{next})
	e.wantErr("Reschedule of an unknown task", err, repository.ErrTaskNotFound, "ghost")
}

// testRescheduleKeepsClaimedFire: a re-timing (Reschedule, UpdateSchedule)
// of a row whose fire is claimed ahead of time (a kept claim queued for
// its next fire) moves the row to the first new fire after the claimed
// one, never to the claimed fire itself: that fire runs once, and its
// finish (of the older revision) leaves the row's next fire standing. A
// second re-timing during the same claim measures from the claimed fire
// too, not from the first re-timing's result.
func testRescheduleKeepsClaimedFire(e *env) {
	n := e.now().Truncate(time.Second)
	claimedAt := n.Add(time.Hour)
	ts := e.upsert(def("doing", claimedAt), def("pending", claimedAt))
	node := e.node("n")
	doing := e.claim(node.ID, ts[0])[0]
	yearly := []time.Time{claimedAt.Add(24 * time.Hour)}
	fires := []time.Time{claimedAt.Add(-time.Minute), claimedAt, claimedAt.Add(time.Minute), claimedAt.Add(2 * time.Minute)}
	for _, f := range []struct {
		fires []time.Time
		want  time.Time
	}{{yearly, yearly[0]}, {fires, fires[2]}} {
		got, err := e.s.Reschedule(e.ctx, e.g, "doing", cronB, f.fires)
		if err != nil {
			e.t.Fatal(err)
		}
		if !got.NextStartTime.Equal(micro(f.want)) || got.Version != doing.Version {
			e.t.Errorf("a claimed row re-timed: next %v version %d, want the first fire after the claimed one (%v) and version %d",
				got.NextStartTime, got.Version, f.want, doing.Version)
		}
	}
	if got, _ := e.s.Reschedule(e.ctx, e.g, "pending", cronB, fires); !got.NextStartTime.Equal(micro(fires[0])) {
		e.t.Errorf("a pending row re-timed: next %v, want the first fire %v", got.NextStartTime, fires[0])
	}
	if got, _ := e.s.Reschedule(e.ctx, e.g, "pending", cronB, nil); !got.NextStartTime.Equal(micro(fires[0])) {
		e.t.Errorf("a re-timing with no fires: next %v, want it kept (%v)", got.NextStartTime, fires[0])
	}
	// The claimed fire runs; its finish, of the older revision, leaves the
	// row's next fire.
	res := e.finish(repository.Finish{Claim: doing.Claim(), Status: repository.ExecSucceeded, Next: claimedAt.Add(30 * time.Second),
		NextAttempt: 1, Cron: cronA, Revision: doing.Revision, Keep: true})
	if res[0].Err != nil || res[0].Task.Status != repository.TaskPending || !res[0].Task.NextStartTime.Equal(micro(fires[2])) {
		e.t.Errorf("finish of the claimed fire: %+v, want the row pending at %v", res[0], fires[2])
	}
	// The next claim holds fires[2]: a re-timing now measures from it, not
	// from the claim before.
	e.claim(node.ID, res[0].Task)
	got, err := e.s.Reschedule(e.ctx, e.g, "doing", cronA, fires)
	if err != nil || !got.NextStartTime.Equal(micro(fires[3])) {
		e.t.Errorf("re-timing the next claim: next %v (%v), want %v", got.NextStartTime, err, fires[3])
	}
}

func testControlUnknown(e *env) {
	e.pending("known")
	for what, op := range map[string]controlOp{"Pause": e.s.Pause, "Resume": e.s.Resume, "Trigger": e.triggerOp} {
		_, err := op(e.ctx, e.g, "ghost")
		e.wantErr(what+" of an unknown task", err, repository.ErrTaskNotFound, "ghost")
		_, err = op(e.ctx, e.other(), "known")
		e.wantErr(what+" in another group", err, repository.ErrTaskNotFound, "known")
	}
}

// triggerOp is Trigger without arguments, as a controlOp.
func (e *env) triggerOp(ctx context.Context, group, name string) (repository.Task, error) {
	return e.s.Trigger(ctx, group, name, "")
}
