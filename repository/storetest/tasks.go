package storetest

import (
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var taskCases = []testCase{
	{"UpsertInsert", testUpsertInsert},
	{"UpsertIdempotent", testUpsertIdempotent},
	{"UpsertScheduleChanged", testUpsertScheduleChanged},
	{"UpsertDoingNotBumped", testUpsertDoingNotBumped},
	{"UpsertOtherChanges", testUpsertOtherChanges},
	{"UpsertStoredParent", testUpsertStoredParent},
	{"UpsertUnknownParent", testUpsertUnknownParent},
	{"ReadTasks", testReadTasks},
}

func testUpsertInsert(e *env) {
	n := e.now()
	next := n.Add(90*time.Second + 123456789) // nanoseconds: the store keeps microseconds
	opts := repository.TaskOptions{Timezone: "Europe/Paris", Misfire: repository.MisfireSkip, Timeout: time.Minute, MaxRetries: 2}
	defs := []repository.TaskDef{
		{Name: "child", Parent: "root", NextStartTime: next},
		{Name: "root", Cron: cronA, Options: opts, NextStartTime: next},
		{Name: "once", Cron: cronB, NextStartTime: next, Finished: true},
	}
	before := e.now()
	ts := e.upsert(defs...)
	after := e.now()
	child, root, once := ts[0], ts[1], ts[2]
	if child.ID <= 0 || root.ID <= 0 || once.ID <= 0 || child.ID == root.ID || root.ID == once.ID || child.ID == once.ID {
		e.t.Fatalf("ids %d, %d, %d: want distinct and positive", child.ID, root.ID, once.ID)
	}
	e.within("created_at", root.CreatedAt, before, after)
	for i, d := range defs {
		want := repository.Task{
			ID: ts[i].ID, Group: e.g, Name: d.Name, Cron: d.Cron, CodeCron: d.Cron, Status: repository.TaskPending,
			Version: 1, NextStartTime: micro(next), Attempt: 1, Options: d.Options,
			CreatedAt: root.CreatedAt, UpdatedAt: root.CreatedAt,
			Handler: d.Name, Revision: 1, // a registered task runs its own code, first definition
		}
		if d.Finished {
			want.Status = repository.TaskFinished
		}
		if d.Parent != "" {
			want.ParentID = root.ID
		}
		e.sameTask("inserted "+d.Name, ts[i], want)
		e.sameTask("Task("+d.Name+")", e.task(d.Name), ts[i])
	}
	all, err := e.s.Tasks(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(all) != 3 {
		e.t.Fatalf("Tasks = %d rows, want 3", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].ID >= all[i].ID {
			e.t.Errorf("Tasks not ordered by id: %v", taskIDs(all))
		}
	}
}

func testUpsertIdempotent(e *env) {
	n := e.now()
	defs := []repository.TaskDef{
		{Name: "a", Cron: cronA, NextStartTime: n.Add(time.Minute), Options: repository.TaskOptions{Timeout: time.Second}},
		{Name: "b", Parent: "a", NextStartTime: n.Add(time.Minute)},
		{Name: "c", Cron: cronB, NextStartTime: n.Add(time.Minute), Finished: true},
	}
	first := e.upsert(defs...)
	e.waitPast(first[0].UpdatedAt)
	second := e.upsert(defs...)
	for i := range defs {
		e.sameTask("second identical upsert of "+defs[i].Name, second[i], first[i])
	}
	// Another replica computes the first fire from a later now: same cron,
	// different NextStartTime. The rows keep their schedule.
	for i := range defs {
		defs[i].NextStartTime = defs[i].NextStartTime.Add(time.Hour)
	}
	third := e.upsert(defs...)
	for i := range defs {
		e.sameTask("upsert with only NextStartTime moved, "+defs[i].Name, third[i], first[i])
		e.sameTask("stored "+defs[i].Name, e.task(defs[i].Name), first[i])
	}
}

func testUpsertScheduleChanged(e *env) {
	n := e.now()
	p, f, fin, z, parked := def("pending", n.Add(time.Hour)), def("finished", n.Add(time.Hour)), def("refinish", n.Add(time.Hour)), def("tz", n.Add(time.Hour)), def("paused", n.Add(time.Hour))
	f.Finished, fin.Finished = true, true
	ts := e.upsert(p, f, fin, z, parked)
	paused, err := e.s.Pause(e.ctx, e.g, "paused")
	if err != nil {
		e.t.Fatal(err)
	}
	ts[4] = paused

	next := n.Add(2*time.Hour + 999)
	p.Cron, f.Cron, fin.Cron, parked.Cron = cronB, cronB, cronB, cronB
	p.NextStartTime, f.NextStartTime, fin.NextStartTime, z.NextStartTime, parked.NextStartTime = next, next, next, next, next
	f.Finished = false // the new cron has fire times again
	z.Options.Timezone = "Asia/Tokyo"
	before := e.now()
	got := e.upsert(p, f, fin, z, parked)
	after := e.now()
	for i, st := range []repository.TaskStatus{repository.TaskPending, repository.TaskPending, repository.TaskFinished, repository.TaskPending, repository.TaskPaused} {
		want := ts[i]
		want.Cron = []string{cronB, cronB, cronB, cronA, cronB}[i]
		want.CodeCron = want.Cron
		want.Options = []repository.TaskOptions{{}, {}, {}, {Timezone: "Asia/Tokyo"}, {}}[i]
		want.NextStartTime = micro(next)
		want.Status = st
		want.Version++
		e.within("updated_at of "+want.Name, got[i].UpdatedAt, before, after)
		want.UpdatedAt = got[i].UpdatedAt
		e.sameTask("schedule change of "+want.Name, got[i], want)
	}
}

func testUpsertDoingNotBumped(e *env) {
	node := e.node("n")
	held := e.claimed("job", node.ID)
	next := e.now().Add(time.Hour)
	d := repository.TaskDef{Name: "job", Cron: cronB, NextStartTime: next, Options: repository.TaskOptions{Timeout: time.Minute}}
	got := e.upsert(d)[0]
	want := held
	want.Cron, want.CodeCron, want.Options, want.NextStartTime = cronB, cronB, d.Options, micro(next)
	want.UpdatedAt = got.UpdatedAt
	e.sameTask("doing row after a deploy changed its cron", got, want)

	// Other option changes on a doing row: written, not bumped.
	d.Options.MaxRetries = 3
	got = e.upsert(d)[0]
	want.Options = d.Options
	want.UpdatedAt = got.UpdatedAt
	e.sameTask("doing row after an option change", got, want)

	// The running fire's claim still holds; its finish sees the cron changed
	// and the row's next fire wins.
	x := e.start(held)
	res := e.finishHeld(repository.Finish{
		Claim: held.Claim(), Revision: held.Revision, ExecutionID: x.ID, Status: repository.ExecSucceeded,
		Next: held.NextStartTime.Add(5 * time.Second), NextAttempt: 1, Cron: cronA, Keep: true,
	})
	if res.Status != repository.TaskPending || res.NodeID != 0 || !res.NextStartTime.Equal(micro(next)) || res.Version != held.Version+1 {
		e.t.Errorf("finish after deploy = %+v, want pending, node 0, next %v, version %d", res, micro(next), held.Version+1)
	}
}

func testUpsertOtherChanges(e *env) {
	n := e.now()
	p1, p2 := def("p1", n.Add(time.Hour)), def("p2", n.Add(time.Hour))
	kid := repository.TaskDef{Name: "kid", Parent: "p1", NextStartTime: n.Add(time.Hour)}
	ts := e.upsert(p1, p2, kid)

	// An option other than the time zone: written, version+1, schedule kept.
	p1.Options.Timeout = time.Minute
	p1.NextStartTime = n.Add(3 * time.Hour) // ignored: the schedule did not change
	got := e.upsert(p1, p2, kid)
	want := ts[0]
	want.Options = p1.Options
	want.Version++
	want.UpdatedAt = got[0].UpdatedAt
	e.sameTask("option change", got[0], want)
	e.sameTask("unchanged sibling", got[1], ts[1])
	e.sameTask("unchanged child", got[2], ts[2])

	// A parent change.
	kid.Parent = "p2"
	got = e.upsert(p1, p2, kid)
	wantKid := ts[2]
	wantKid.ParentID = ts[1].ID
	wantKid.Version++
	wantKid.UpdatedAt = got[2].UpdatedAt
	e.sameTask("parent change", got[2], wantKid)

	// Becoming a root.
	kid.Parent = ""
	got = e.upsert(kid)
	wantKid.ParentID = 0
	wantKid.Version++
	wantKid.UpdatedAt = got[0].UpdatedAt
	e.sameTask("parent removed", got[0], wantKid)
}

func testUpsertStoredParent(e *env) {
	root := e.upsert(def("root", e.now().Add(time.Hour)))[0]
	kid := e.upsert(repository.TaskDef{Name: "kid", Parent: "root", NextStartTime: e.now()})[0]
	if kid.ParentID != root.ID {
		e.t.Errorf("child of a stored parent has parent_id %d, want %d", kid.ParentID, root.ID)
	}
	// A same-named task of another group is not a candidate parent.
	e.upsertIn(e.other(), def("lonely-parent", e.now()))
	_, err := e.s.UpsertTasks(e.ctx, e.g, []repository.TaskDef{{Name: "kid2", Parent: "lonely-parent", NextStartTime: e.now()}})
	e.wantErr("parent stored only in another group", err, repository.ErrTaskNotFound, "lonely-parent")
}

func testUpsertUnknownParent(e *env) {
	n := e.now()
	_, err := e.s.UpsertTasks(e.ctx, e.g, []repository.TaskDef{
		def("fine", n), {Name: "orphan", Parent: "ghost", NextStartTime: n},
	})
	e.wantErr("unknown parent", err, repository.ErrTaskNotFound, "ghost")
	ts, err := e.s.Tasks(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(ts) != 0 {
		e.t.Errorf("failed UpsertTasks wrote %d rows, want none (one transaction)", len(ts))
	}
}

func testReadTasks(e *env) {
	_, err := e.s.Task(e.ctx, e.g, "nope")
	e.wantErr("Task of an unknown name", err, repository.ErrTaskNotFound, "nope")
	ts, err := e.s.Tasks(e.ctx, e.g)
	if err != nil || len(ts) != 0 {
		e.t.Errorf("Tasks of an empty group = %v, %v; want none", ts, err)
	}
	mine := e.upsert(def("same", e.now()), def("second", e.now()))
	theirs := e.upsertIn(e.other(), def("same", e.now()))[0]
	if theirs.ID == mine[0].ID {
		e.t.Fatalf("same name in two groups shares id %d", theirs.ID)
	}
	e.sameTask("Task reads its own group", e.task("same"), mine[0])
	e.sameTask("Task of the other group", e.taskIn(e.other(), "same"), theirs)
	ts, err = e.s.Tasks(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(ts) != 2 {
		e.t.Fatalf("Tasks = %v, want the group's 2 rows", taskIDs(ts))
	}
	e.sameTask("Tasks[0]", ts[0], mine[0])
	e.sameTask("Tasks[1]", ts[1], mine[1])
}
