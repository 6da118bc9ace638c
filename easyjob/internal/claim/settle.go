package claim

import (
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// A finish settles its claim: the written row says where the claim ends
// (Settle), and whether the claim of the next fire, queued before the
// write, holds the row.
//
// A kept claim's next fire does not wait for the database. When a job
// ends and its finish keeps the claim, the node knows the row the finish
// will write: same task, node and status, version+1, the next fire it
// planned. It queues that claim (the successor) at once, before the
// finish is written, so a next fire that is already due (a start-up or an
// outage being caught up) or that falls before a slow finish returns
// fires on time instead of after the write.
//
// The finish confirms the successor: the written row must be exactly the
// one predicted. It differs when an operator acted during the run (pause,
// trigger, reschedule) or the claim was lost; then the successor is void:
// it never fires if it has not yet, its job's context is cancelled if it
// has, and its writes are fenced (its run is recorded 'fenced', not
// applied). Until confirmed, the successor's own writes (start record,
// finish) wait for the confirmation (AfterSettle), so they never race the
// finish they depend on. Only a confirmed claim gets a successor: at most
// one finish per task is ahead of its fires.

// Keep is what the node knows, beside the written row, that decides
// whether it holds a row its finish kept.
type Keep struct {
	Node     repository.NodeID         // this node: a kept row names it
	Epoch    int64                     // the set's epoch when the finish was handed over
	ToLocal  func(time.Time) time.Time // a database fire time on the local clock
	Stopping func() bool               // a stopping node takes up no claim that has not fired
}

// Settled is where a settled claim ended, and what that leaves to the
// node.
type Settled struct {
	End State // Kept, Released, Fenced or Dropped
	// Queue is the claim that now holds the kept row, for the delay queue:
	// the row is not the one a successor predicted, or none was queued. Nil
	// when the successor holds it (it is queued already).
	Queue *Claim
	// Unheld reports a row the finish kept for this node that the set did
	// not take back (the node dropped its claims, or began to stop, during
	// the write): the row is the node's to give back.
	Unheld bool
	// Cancelled is a successor that had fired when the row refused it: it
	// is void now and its job's context cancelled (its finish is fenced).
	Cancelled *Claim
}

// Settle is the transition that ends Finishing claim c, given the result
// res of its written finish, all in one place:
//
//	the claim was lost              Fenced; forgotten
//	the finish was not written      Dropped; forgotten (reconcile sees to the row)
//	the row kept for this node      Kept: held by the successor if the row
//	                                is the one it predicted, else by a new
//	                                claim (Queue); or Released and Unheld
//	                                when the set does not take it back
//	any other row                   Released; forgotten
//
// A successor the row does not confirm is voided, its job cancelled if it
// fired. Last, c moves to its end, which runs what waited for it (the
// successor's own writes): they go once c is held again or forgotten.
// A claim that is not Finishing (a bug: only its worker finishes it, and
// once) keeps its state; the set is updated all the same.
//
// The caller holds the gate (Hold) from before the write: reconcile must
// not compare the row with the set between the write and the renewal, or
// it would release a claim this node still holds.
func (s *Set) Settle(c *Claim, res repository.FinishResult, k Keep) Settled {
	succ := c.queued()
	st := Settled{End: Released}
	var next *Claim // the claim of the row the finish kept for this node
	switch {
	case errors.Is(res.Err, repository.ErrClaimLost):
		// Fenced, or a retry of a finish whose first reply was lost: then
		// the row may still name this node, which reconcile sorts out.
		st.End = Fenced
	case res.Err != nil:
		st.End = Dropped
	case res.Task.Status == repository.TaskDoing && res.Task.NodeID == k.Node:
		next = succ
		if next == nil || !next.predicts(res.Task) || (!next.HasFired() && next.Epoch != k.Epoch) {
			next = New(res.Task, c.Spec, k.ToLocal(res.Task.DueAt()), k.Epoch)
		}
	}
	// One step against the boss's Fire, which takes the same lock: the
	// task's claim changes and the successor is voided together.
	s.mu.Lock()
	kept := false
	if s.held[c.Task.ID] == c {
		// A live view that changed during the write does not undo the keep:
		// the claim is ours and fires once more here; the next finish hands
		// it over in its own statement. Releasing it now would cost one
		// statement per task just when nodes join (a release storm). A
		// successor that already fired is held whatever happened since
		// (stopping, a silence): its fire ran, so its finish must be written
		// like that of any running job, or the row would offer that fire
		// again.
		kept = next != nil && !next.Void() && (next.HasFired() || (s.epoch.Load() == k.Epoch && !k.Stopping()))
		if kept {
			s.held[c.Task.ID] = next
		} else {
			delete(s.held, c.Task.ID)
		}
	}
	switch {
	case kept && next == succ:
		st.End, succ = Kept, nil // confirmed, and queued already
	case kept:
		st.End, st.Queue = Kept, next
	case next != nil:
		st.Unheld = true
	}
	cancel := false
	if succ != nil {
		succ.mu.Lock()
		cancel = succ.markVoidLocked()
		succ.mu.Unlock()
	}
	s.mu.Unlock()
	if cancel {
		succ.Stop()
		st.Cancelled = succ
	}
	c.settle(st.End)
	return st
}

// Successor returns the claim of the next fire that c's finish f keeps,
// linked to c, or nil when none may be queued ahead of the write: c must
// be confirmed (not a successor still waiting, not void), of the current
// epoch, without children (a chain's next run reads its history), and
// not settled yet.
func (c *Claim) Successor(f repository.Finish, localAt time.Time, epoch int64) *Claim {
	if !f.Keep || len(c.Spec.Children) > 0 || c.pred.Load() != nil || c.Epoch != epoch {
		return nil
	}
	t := c.Task
	t.Version++
	t.NextStartTime = f.Next
	t.Attempt = f.NextAttempt
	t.Status = repository.TaskDoing
	t.FireKind, t.FireArgs = f.NextKind, "" // a kept claim's next fire is the cron's, buffered or a backfill's (a finish that keeps clears the args)
	if f.Backfilled {
		t.BackfillNext = f.BackfillNext
		if f.BackfillNext.IsZero() {
			t.BackfillTo, t.BackfillAt = time.Time{}, time.Time{}
		}
	}
	if f.CountFire {
		t.Fires++
	}
	switch f.Status { // as the finish counts the failures in a row (PauseAfter reads them)
	case repository.ExecFailed, repository.ExecTimedOut:
		t.Failures++
	case repository.ExecSucceeded:
		t.Failures = 0
	}
	next := newClaim(t, c.Spec, localAt, c.Epoch)
	next.Sched = c.Sched // same row, same cron: no need to work it out again
	next.backfill()
	next.delay()
	next.pred.Store(c)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.void.Load() || c.current().Final() {
		return nil
	}
	c.next = next
	return next
}

// Pred is the predecessor whose finish must confirm c, or nil once
// confirmed (or for a claim the database gave).
func (c *Claim) Pred() *Claim { return c.pred.Load() }

// queued returns the successor queued for c's next fire, if any.
func (c *Claim) queued() *Claim {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

// predicts reports whether t, the row c's predecessor's finish wrote, is
// the row c was built from: the claim and its next fire are as planned.
func (c *Claim) predicts(t repository.Task) bool {
	p := c.Task
	next, _, attempt := c.Row()
	return t.ID == p.ID && t.Version == p.Version && t.NodeID == p.NodeID && t.Status == repository.TaskDoing &&
		t.NextStartTime.Equal(next.Truncate(storePrecision)) && t.Attempt == attempt &&
		t.Cron == p.Cron && t.Revision == p.Revision && t.Failures == p.Failures &&
		t.BackfillNext.Equal(p.BackfillNext.Truncate(storePrecision)) && t.Fires == p.Fires
}

// storePrecision is the precision of times in the store: PostgreSQL keeps
// microseconds, and the driver truncates.
const storePrecision = time.Microsecond
