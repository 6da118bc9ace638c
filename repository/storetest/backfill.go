package storetest

import (
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var backfillCases = []testCase{
	{"Pending", testBackfillPending},
	{"WhileDoing", testBackfillWhileDoing},
	{"FinishKinds", testFinishKindsAndFires},
	{"RunBatches", testRunBatches},
	{"RecoverBackfillFire", testRecoverBackfillFire},
}

// testBackfillPending: a backfill makes a pending row due at once without
// moving its own next fire; one at a time; its finishes walk the range
// with the claim kept, and the last one ends it: the row is due at its
// own fire again.
func testBackfillPending(e *env) {
	n := e.now()
	own := n.Add(time.Hour)
	ts := e.upsert(def("job", own))
	first, to := n.Add(-10*time.Minute), n.Add(-5*time.Minute)
	got, err := e.s.Backfill(e.ctx, e.g, "job", first, to)
	if err != nil {
		e.t.Fatal(err)
	}
	want := ts[0]
	want.Version++
	want.BackfillNext, want.BackfillTo, want.UpdatedAt, want.BackfillAt = micro(first), micro(to), got.UpdatedAt, got.BackfillAt
	e.within("backfill asked at", got.BackfillAt, n, e.now())
	e.sameTask("backfilled pending row", got, want)
	ids, _ := e.due(0, 0, "job")
	e.wantDue("a row with a backfill fire is due at once", ids, got)
	if _, err := e.s.Backfill(e.ctx, e.g, "job", first, to); !errors.Is(err, repository.ErrBackfillInProgress) {
		e.t.Errorf("a second Backfill = %v, want ErrBackfillInProgress", err)
	}
	e.sameTask("a refused backfill writes nothing", e.task("job"), got)

	node := e.node("n")
	held := e.claim(node.ID, got)[0]
	x := e.start(held)
	second := first.Add(time.Minute)
	f := keep(held, x.ID, repository.ExecSucceeded)
	f.Next, f.Backfilled, f.BackfillNext = held.NextStartTime, true, second
	res := e.finishHeld(f)
	if res.Status != repository.TaskDoing || !res.NextStartTime.Equal(micro(own)) || !res.BackfillNext.Equal(micro(second)) ||
		!res.BackfillTo.Equal(micro(to)) || res.Fires != 0 {
		e.t.Errorf("finish of a backfill fire = %+v; want kept, own fire %s, backfill at %s until %s, no fire counted", res, micro(own), micro(second), micro(to))
	}
	f = keep(res, 0, repository.ExecSucceeded)
	f.Next, f.Keep, f.Backfilled = res.NextStartTime, false, true // the range is done
	res = e.finishHeld(f)
	if res.Status != repository.TaskPending || !res.BackfillNext.IsZero() || !res.BackfillTo.IsZero() || !res.NextStartTime.Equal(micro(own)) {
		e.t.Errorf("finish of the last backfill fire = %+v; want pending at its own fire %s, no backfill", res, micro(own))
	}
	ids, _ = e.due(0, 0, "job")
	e.wantDue("after its backfill the row waits for its own fire", ids)
}

// testBackfillWhileDoing: a backfill asked for while a fire runs keeps
// the row's version; that fire's finish does not keep the claim and the
// row is due at once for the backfill.
func testBackfillWhileDoing(e *env) {
	n := e.now()
	ts := e.upsert(def("job", n))
	node := e.node("n")
	held := e.claim(node.ID, ts[0])[0]
	got, err := e.s.Backfill(e.ctx, e.g, "job", n.Add(-time.Hour), n.Add(-time.Minute))
	if err != nil {
		e.t.Fatal(err)
	}
	if got.Version != held.Version || got.Status != repository.TaskDoing {
		e.t.Errorf("backfill of a doing row = %+v; want its claim untouched (version %d)", got, held.Version)
	}
	x := e.start(got)
	res := e.finishHeld(keep(got, x.ID, repository.ExecSucceeded))
	if res.Status != repository.TaskPending || res.NodeID != 0 {
		e.t.Errorf("finish keeping a claim with a backfill asked for = %+v; want pending", res)
	}
	ids, _ := e.due(0, 0, "job")
	e.wantDue("the backfill is due at once", ids, res)
}

// testFinishKindsAndFires: a finish writes the kind of the next fire it
// keeps or schedules (buffered) and counts the fire when asked.
func testFinishKindsAndFires(e *env) {
	n := e.now()
	ts := e.upsert(def("job", n))
	node := e.node("n")
	held := e.claim(node.ID, ts[0])[0]
	x := e.start(held)
	f := keep(held, x.ID, repository.ExecSucceeded)
	f.NextKind, f.CountFire = repository.RunBuffered, true
	res := e.finishHeld(f)
	if res.FireKind != repository.RunBuffered || res.Fires != 1 || res.Status != repository.TaskDoing {
		e.t.Errorf("kept finish with a buffered next = %+v; want doing, kind buffered, 1 fire", res)
	}
	f = keep(res, 0, repository.ExecSucceeded)
	f.Keep, f.CountFire = false, true
	res = e.finishHeld(f)
	if res.FireKind != "" || res.Fires != 2 || res.Status != repository.TaskPending {
		e.t.Errorf("plain finish = %+v; want pending, the cron's kind, 2 fires", res)
	}
}

// testRunBatches: runs of one fire on one node are apart by batch (a
// backfill's beside the fire's own), and a retried start of each finds
// its own row.
func testRunBatches(e *env) {
	n := e.now()
	ts := e.upsert(def("job", n))
	node := e.node("n")
	held := e.claim(node.ID, ts[0])[0]
	own := repository.Execution{ScheduledAt: n, Attempt: 1, Kind: repository.RunCron}
	bf := own
	bf.Kind, bf.Batch = repository.RunBackfill, 1234567
	x1, err := e.s.StartExecution(e.ctx, held.Claim(), own)
	if err != nil {
		e.t.Fatal(err)
	}
	x2, err := e.s.StartExecution(e.ctx, held.Claim(), bf)
	if err != nil {
		e.t.Fatal(err)
	}
	again, err := e.s.StartExecution(e.ctx, held.Claim(), bf)
	if err != nil {
		e.t.Fatal(err)
	}
	if x1.ID == x2.ID || again.ID != x2.ID || x2.Batch != bf.Batch {
		e.t.Errorf("runs of one fire: own %d, backfill %d (batch %d), retried backfill start %d; want two rows, the retry finding the second",
			x1.ID, x2.ID, x2.Batch, again.ID)
	}
}

// testRecoverBackfillFire: a node that died holding a row with a backfill
// fire pending ran that fire: recovery records it abandoned at the
// backfill's nominal time, kind backfill, in the backfill's batch; the
// fire stays pending for a peer.
func testRecoverBackfillFire(e *env) {
	n := e.now()
	e.upsert(def("job", n.Add(time.Hour)))
	first := n.Add(-10 * time.Minute)
	b, err := e.s.Backfill(e.ctx, e.g, "job", first, n.Add(-time.Minute))
	if err != nil {
		e.t.Fatal(err)
	}
	dead := e.node("dead")
	held := e.claim(dead.ID, b)[0]
	if _, err := e.s.Heartbeat(e.ctx, dead); err != nil {
		e.t.Fatal(err)
	}
	if err := e.recover(repository.Recovery{Ref: held.Ref(), DeadNode: dead.ID}); err != nil {
		e.t.Fatal(err)
	}
	xs := e.history("job", repository.HistoryFilter{})
	if len(xs) != 1 || xs[0].Status != repository.ExecAbandoned || !xs[0].ScheduledAt.Equal(micro(first)) ||
		xs[0].Kind != repository.RunBackfill || xs[0].Batch != b.BackfillAt.UnixMicro() {
		e.t.Fatalf("history after the death = %+v; want one abandoned backfill row at %s in batch %d", xs, micro(first), b.BackfillAt.UnixMicro())
	}
	if got := e.task("job"); !got.BackfillNext.Equal(micro(first)) || got.Status != repository.TaskPending {
		e.t.Errorf("recovered row = %+v; want pending with its backfill fire still to run", got)
	}
}
