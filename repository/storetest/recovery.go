package storetest

import (
	"fmt"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var recoveryCases = []testCase{
	{"Orphans", testOrphans},
	{"Recover", testRecover},
	{"RecoverNext", testRecoverNext},
	{"RecoverRace", testRecoverRace},
	{"RecoverAll", testRecoverAll},
}

// RecoverAll: one batch, each orphan with its own version check, results
// in order; the dead node's running executions of the reset tasks only are
// abandoned.
func testRecoverAll(e *env) {
	if errs, err := e.s.RecoverAll(e.ctx, nil); err != nil || errs != nil {
		e.t.Errorf("RecoverAll(nil) = %v, %v; want nil, nil", errs, err)
	}
	dead, peer := e.node("dead"), e.node("peer")
	a, b, c := e.claimed("a", dead.ID), e.claimed("b", dead.ID), e.claimed("c", peer.ID)
	runA, runB := e.start(a), e.start(b)
	errs, err := e.s.RecoverAll(e.ctx, []repository.Recovery{
		{Ref: a.Ref(), DeadNode: dead.ID},
		{Ref: repository.TaskRef{ID: b.ID, Version: b.Version - 1}, DeadNode: dead.ID}, // stale
		{Ref: c.Ref(), DeadNode: dead.ID},                                              // not the dead node's
	})
	if err != nil || len(errs) != 3 {
		e.t.Fatalf("RecoverAll = %v, %v", errs, err)
	}
	if errs[0] != nil {
		e.t.Errorf("recovery of a: %v", errs[0])
	}
	e.wantErr("stale recovery of b", errs[1], repository.ErrClaimLost, "")
	e.wantErr("recovery of c from the wrong node", errs[2], repository.ErrClaimLost, "")
	if got := e.task("a"); got.Status != repository.TaskPending || got.NodeID != 0 || got.Version != a.Version+1 {
		e.t.Errorf("a after RecoverAll = %+v", got)
	}
	e.sameTask("b untouched", e.task("b"), b)
	e.sameTask("c untouched", e.task("c"), c)
	if x := e.exec("a", runA.ID); x.Status != repository.ExecAbandoned {
		e.t.Errorf("a's run = %s, want abandoned", x.Status)
	}
	if x := e.exec("b", runB.ID); x.Status != repository.ExecRunning {
		e.t.Errorf("b's run = %s, want still running", x.Status)
	}
}

// Orphans are doing tasks of nodes whose row is gone or silent; tasks of
// live nodes are not.
func testOrphans(e *env) {
	gone, silent := e.node("gone"), e.node("silent")
	n := e.now()
	ts := e.upsert(def("of-gone", n), def("of-silent", n), def("of-live", n), def("unclaimed", n))
	ofGone := e.claim(gone.ID, ts[0])[0]
	ofSilent := e.claim(silent.ID, ts[1])[0]
	if err := e.s.DeleteNode(e.ctx, gone.ID); err != nil {
		e.t.Fatal(err)
	}
	// Another group's orphan is not listed.
	otherNode := e.nodeIn(e.other(), "x")
	e.claim(otherNode.ID, e.upsertIn(e.other(), def("theirs", n))[0])
	if err := e.s.DeleteNode(e.ctx, otherNode.ID); err != nil {
		e.t.Fatal(err)
	}

	e.waitPast(silent.HeartbeatAt.Add(2 * slack))
	live := e.node("live")
	e.claim(live.ID, ts[2])
	orphans, err := e.s.Orphans(e.ctx, e.g, slack)
	if err != nil {
		e.t.Fatal(err)
	}
	want := map[repository.TaskID]repository.Task{ofGone.ID: ofGone, ofSilent.ID: ofSilent}
	if len(orphans) != len(want) {
		var got []string
		for _, o := range orphans {
			got = append(got, fmt.Sprintf("%s@%d", o.Task.Name, o.DeadNode))
		}
		e.t.Fatalf("Orphans = %v, want of-gone and of-silent", got)
	}
	for _, o := range orphans {
		w, ok := want[o.Task.ID]
		if !ok {
			e.t.Errorf("unexpected orphan %+v", o)
			continue
		}
		if o.DeadNode != w.NodeID {
			e.t.Errorf("orphan %s: DeadNode %d, want %d", w.Name, o.DeadNode, w.NodeID)
		}
		e.sameTask("orphan "+w.Name, o.Task, w)
	}

	// Heartbeating again makes the silent node live: its task is no orphan.
	if _, err := e.s.Heartbeat(e.ctx, silent); err != nil {
		e.t.Fatal(err)
	}
	orphans, err = e.s.Orphans(e.ctx, e.g, slack)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(orphans) != 1 || orphans[0].Task.ID != ofGone.ID || orphans[0].DeadNode != gone.ID {
		e.t.Errorf("Orphans after the silent node came back = %+v, want only of-gone", orphans)
	}
}

// Recover resets the task, abandons the dead node's running executions of
// it, and a second Recover with the old version loses.
func testRecover(e *env) {
	dead, peer := e.node("dead"), e.node("peer")
	job := e.claimed("job", peer.ID)
	peerRun := e.start(job).ID // the peer's execution, left running
	if r, err := e.s.Release(e.ctx, []repository.Claim{job.Claim()}); err != nil || r != 1 {
		e.t.Fatalf("Release = %d, %v", r, err)
	}
	job = e.claim(dead.ID, e.task("job"))[0]
	job, doneID := e.runOnce(job, repository.ExecSucceeded)
	doneX := e.exec("job", doneID)
	runX := e.start(job)
	otherJob := e.claimed("other", dead.ID)
	otherRun := e.start(otherJob).ID

	err := e.recover(repository.Recovery{Ref: job.Ref(), DeadNode: peer.ID})
	e.wantErr("Recover naming the wrong node", err, repository.ErrClaimLost, "")
	err = e.recover(repository.Recovery{Ref: repository.TaskRef{ID: job.ID, Version: job.Version - 1}, DeadNode: dead.ID})
	e.wantErr("Recover with an old version", err, repository.ErrClaimLost, "")
	e.sameTask("row after lost recoveries", e.task("job"), job)

	before := e.now()
	if err := e.recover(repository.Recovery{Ref: job.Ref(), DeadNode: dead.ID}); err != nil {
		e.t.Fatalf("Recover: %v", err)
	}
	after := e.now()
	got := e.task("job")
	want := job
	want.Status, want.NodeID = repository.TaskPending, 0
	want.Version++
	want.UpdatedAt = got.UpdatedAt
	// The run it abandoned is the task's last result, so a peer re-running
	// a chain knows to look for it (ChainRun).
	want.LastStatus, want.LastError = repository.ExecAbandoned, got.LastError
	e.sameTask("recovered row keeps its next_start_time", got, want)
	if got.LastError == "" {
		e.t.Error("recovered row has no last error naming the dead node")
	}

	x := e.exec("job", runX.ID)
	e.within("abandoned finished_at", x.FinishedAt, before, after)
	wantX := runX
	wantX.TaskName, wantX.Status, wantX.FinishedAt = "job", repository.ExecAbandoned, x.FinishedAt
	wantX.Error = fmt.Sprintf("node %d died", dead.ID)
	e.sameExec("abandoned execution", x, wantX)
	e.sameExec("finished execution untouched", e.exec("job", doneID), doneX)
	if x := e.exec("job", peerRun); x.Status != repository.ExecRunning {
		e.t.Errorf("another node's execution = %s, want still running", x.Status)
	}
	if x := e.exec("other", otherRun); x.Status != repository.ExecRunning {
		e.t.Errorf("the dead node's execution of another task = %s, want still running", x.Status)
	}

	err = e.recover(repository.Recovery{Ref: job.Ref(), DeadNode: dead.ID})
	e.wantErr("second Recover with the old version", err, repository.ErrClaimLost, "")
	err = e.recover(repository.Recovery{Ref: got.Ref(), DeadNode: dead.ID})
	e.wantErr("Recover of a pending row", err, repository.ErrClaimLost, "")
	e.sameTask("row after the second Recover", e.task("job"), got)
	// The recovered task is claimable again.
	e.claim(peer.ID, got)
}

// A non-zero Next replaces next_start_time (recovery policy skip).
func testRecoverNext(e *env) {
	dead := e.node("dead")
	job := e.claimed("job", dead.ID)
	next := e.now().Add(time.Hour + 4321)
	if err := e.recover(repository.Recovery{Ref: job.Ref(), DeadNode: dead.ID, Next: next}); err != nil {
		e.t.Fatal(err)
	}
	if got := e.task("job"); !got.NextStartTime.Equal(micro(next)) || got.Status != repository.TaskPending {
		e.t.Errorf("recovered with Next = %+v, want pending at %v", got, micro(next))
	}
}

// Many peers recover the same orphan at once: exactly one succeeds.
func testRecoverRace(e *env) {
	const peers = 20
	dead := e.node("dead")
	job := e.claimed("job", dead.ID)
	x := e.start(job)
	var (
		wg   sync.WaitGroup
		errs = make([]error, peers)
	)
	start := make(chan struct{})
	for i := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = e.recover(repository.Recovery{Ref: job.Ref(), DeadNode: dead.ID})
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else {
			e.wantErr("losing Recover", err, repository.ErrClaimLost, "")
		}
	}
	if wins != 1 {
		e.t.Errorf("%d Recovers succeeded, want exactly 1", wins)
	}
	if got := e.task("job"); got.Version != job.Version+1 || got.Status != repository.TaskPending {
		e.t.Errorf("row after the race = %+v, want pending at version %d", got, job.Version+1)
	}
	if got := e.exec("job", x.ID); got.Status != repository.ExecAbandoned {
		e.t.Errorf("execution after the race = %s, want abandoned", got.Status)
	}
}
