package storetest

import (
	"reflect"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var historyCases = []testCase{
	{"PagesAndFilters", testHistory},
	{"DefaultLimit", testHistoryDefaultLimit},
	{"PruneByAge", testPruneByAge},
	{"PruneByRows", testPruneByRows},
	{"PruneManyBatches", testPruneMany},
	{"PruneNoBounds", testPruneNoBounds},
}

func execIDs(xs []repository.Execution) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = x.ID
	}
	return out
}

func (e *env) wantExecs(what string, got []repository.Execution, want ...int64) {
	e.t.Helper()
	if g := execIDs(got); !reflect.DeepEqual(g, want) && !(len(g) == 0 && len(want) == 0) {
		e.t.Errorf("%s: executions %v, want %v", what, g, want)
	}
}

func testHistory(e *env) {
	node := e.node("n")
	job := e.claimed("job", node.ID)
	noise := e.claimed("noise", node.ID)
	e.runOnce(noise, repository.ExecSucceeded)
	var ids []int64 // oldest first
	for i := range 7 {
		st := repository.ExecSucceeded
		if i%2 == 1 {
			st = repository.ExecFailed
		}
		var id int64
		job, id = e.runOnce(job, st)
		ids = append(ids, id)
	}
	running := e.start(job).ID
	ids = append(ids, running)
	desc := make([]int64, len(ids))
	for i, id := range ids {
		desc[len(ids)-1-i] = id
	}

	all := e.history("job", repository.HistoryFilter{})
	e.wantExecs("all, newest first", all, desc...)
	for _, x := range all {
		if x.TaskName != "job" || x.TaskID != job.ID || x.NodeID != node.ID {
			e.t.Errorf("History row %+v: want task job (%d) by node %d", x, job.ID, node.ID)
		}
	}

	// Pages of 3 by BeforeID.
	var paged []repository.Execution
	before := int64(0)
	for range 10 {
		page := e.history("job", repository.HistoryFilter{BeforeID: before, Limit: 3})
		if len(page) > 3 {
			e.t.Fatalf("page of %d rows with Limit 3", len(page))
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		before = page[len(page)-1].ID
	}
	e.wantExecs("pages of 3", paged, desc...)

	// Status filter.
	var failed []int64
	for _, x := range all {
		if x.Status == repository.ExecFailed {
			failed = append(failed, x.ID)
		}
	}
	if len(failed) != 3 {
		e.t.Fatalf("%d failed executions, want 3", len(failed))
	}
	e.wantExecs("failed only", e.history("job", repository.HistoryFilter{Status: repository.ExecFailed}), failed...)
	e.wantExecs("failed, limit 2", e.history("job", repository.HistoryFilter{Status: repository.ExecFailed, Limit: 2}), failed[:2]...)
	e.wantExecs("failed, before the newest failure", e.history("job", repository.HistoryFilter{Status: repository.ExecFailed, BeforeID: failed[0]}), failed[1:]...)
	e.wantExecs("running only", e.history("job", repository.HistoryFilter{Status: repository.ExecRunning}), running)

	// Since: started_at >= since.
	since := all[3].StartedAt
	var recent []int64
	for _, x := range all {
		if !x.StartedAt.Before(since) {
			recent = append(recent, x.ID)
		}
	}
	e.wantExecs("since", e.history("job", repository.HistoryFilter{Since: since}), recent...)
	e.wantExecs("since the future", e.history("job", repository.HistoryFilter{Since: e.now().Add(time.Hour)}))

	// Fire: the runs of one fire.
	var ofFire []int64
	for _, x := range all {
		if x.ScheduledAt.Equal(all[2].ScheduledAt) {
			ofFire = append(ofFire, x.ID)
		}
	}
	e.wantExecs("the runs of one fire", e.history("job", repository.HistoryFilter{Fire: all[2].ScheduledAt}), ofFire...)
	e.wantExecs("a time no fire had", e.history("job", repository.HistoryFilter{Fire: all[0].ScheduledAt.Add(time.Millisecond)}))

	_, err := e.s.History(e.ctx, e.g, "ghost", repository.HistoryFilter{})
	e.wantErr("History of an unknown task", err, repository.ErrTaskNotFound, "ghost")
	_, err = e.s.History(e.ctx, e.other(), "job", repository.HistoryFilter{})
	e.wantErr("History in another group", err, repository.ErrTaskNotFound, "job")
}

func testHistoryDefaultLimit(e *env) {
	node := e.node("n")
	job := e.claimed("job", node.ID)
	var last int64
	for range 105 {
		last = e.start(job).ID
	}
	xs := e.history("job", repository.HistoryFilter{})
	if len(xs) != 100 || xs[0].ID != last {
		e.t.Errorf("History with Limit 0 = %d rows starting at %v, want 100 starting at %d", len(xs), execIDs(xs[:1]), last)
	}
	if xs := e.history("job", repository.HistoryFilter{Limit: 200}); len(xs) != 105 {
		e.t.Errorf("History with Limit 200 = %d rows, want 105", len(xs))
	}
}

func testPruneByAge(e *env) {
	node := e.node("n")
	old := e.claimed("old", node.ID)
	oldRunning := e.start(old).ID
	old, _ = e.runOnce(old, repository.ExecSucceeded)
	old, _ = e.runOnce(old, repository.ExecFailed)
	// Another group's old history is not this group's to prune.
	foreignNode := e.nodeIn(e.other(), "f")
	foreign := e.claim(foreignNode.ID, e.upsertIn(e.other(), def("old", e.now()))[0])[0]
	x := e.start(foreign)
	e.finishHeld(repository.Finish{Claim: foreign.Claim(), Revision: foreign.Revision, ExecutionID: x.ID, Status: repository.ExecSucceeded,
		Next: foreign.NextStartTime.Add(time.Minute), NextAttempt: 1, Cron: cronA})

	e.waitPast(x.StartedAt.Add(2 * slack))
	fresh := e.claimed("fresh", node.ID)
	_, freshID := e.runOnce(fresh, repository.ExecSucceeded)
	oldKept := e.start(old).ID // running and new

	n, err := e.s.PruneHistory(e.ctx, e.g, slack, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	if n != 2 {
		e.t.Errorf("PruneHistory by age = %d, want 2", n)
	}
	e.wantExecs("old task after prune", e.history("old", repository.HistoryFilter{}), oldKept, oldRunning)
	e.wantExecs("fresh task after prune", e.history("fresh", repository.HistoryFilter{}), freshID)
	xs, err := e.s.History(e.ctx, e.other(), "old", repository.HistoryFilter{})
	if err != nil || len(xs) != 1 {
		e.t.Errorf("other group's history after prune = %v, %v; want its one execution", execIDs(xs), err)
	}
}

func testPruneByRows(e *env) {
	node := e.node("n")
	a := e.claimed("a", node.ID)
	b := e.claimed("b", node.ID)
	aRunning := e.start(a).ID // oldest of a, still running: never pruned
	var aIDs, bIDs []int64
	for range 5 {
		var id int64
		a, id = e.runOnce(a, repository.ExecSucceeded)
		aIDs = append(aIDs, id)
	}
	for range 3 {
		var id int64
		b, id = e.runOnce(b, repository.ExecFailed)
		bIDs = append(bIDs, id)
	}
	n, err := e.s.PruneHistory(e.ctx, e.g, 0, 2)
	if err != nil {
		e.t.Fatal(err)
	}
	if n != 4 {
		e.t.Errorf("PruneHistory(maxRows 2) = %d, want 4", n)
	}
	e.wantExecs("a keeps its newest 2 and the running one", e.history("a", repository.HistoryFilter{}), aIDs[4], aIDs[3], aRunning)
	e.wantExecs("b keeps its newest 2", e.history("b", repository.HistoryFilter{}), bIDs[2], bIDs[1])
	if n, err := e.s.PruneHistory(e.ctx, e.g, 0, 2); err != nil || n != 0 {
		e.t.Errorf("second PruneHistory = %d, %v; want 0", n, err)
	}
}

// More rows than one batch: the count covers every batch.
func testPruneMany(e *env) {
	const total, keepRows = 1205, 5
	node := e.node("n")
	// Due after the node's last heartbeat: recovery adds no abandoned row.
	job := e.claim(node.ID, e.upsert(def("job", e.now().Add(time.Hour)))[0])[0]
	var ids []int64
	for range total {
		ids = append(ids, e.start(job).ID)
	}
	// Recover closes every running execution of the dead node as abandoned.
	if err := e.recover(repository.Recovery{Ref: job.Ref(), DeadNode: node.ID}); err != nil {
		e.t.Fatal(err)
	}
	n, err := e.s.PruneHistory(e.ctx, e.g, 0, keepRows)
	if err != nil {
		e.t.Fatal(err)
	}
	if n != total-keepRows {
		e.t.Errorf("PruneHistory = %d, want %d", n, total-keepRows)
	}
	e.wantExecs("left after prune", e.history("job", repository.HistoryFilter{}), ids[total-1], ids[total-2], ids[total-3], ids[total-4], ids[total-5])
}

func testPruneNoBounds(e *env) {
	node := e.node("n")
	job := e.claimed("job", node.ID)
	e.runOnce(job, repository.ExecSucceeded)
	if n, err := e.s.PruneHistory(e.ctx, e.g, 0, 0); err != nil || n != 0 {
		e.t.Errorf("PruneHistory(0, 0) = %d, %v; want 0, nil", n, err)
	}
	if xs := e.history("job", repository.HistoryFilter{}); len(xs) != 1 {
		e.t.Errorf("history after PruneHistory(0, 0) = %d rows, want 1", len(xs))
	}
}
