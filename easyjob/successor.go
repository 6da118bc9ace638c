package easyjob

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

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
// finish) wait for the confirmation, so they never race the finish they
// depend on. Only a confirmed claim gets a successor: at most one finish
// per task is ahead of its fires.

// successorState is the part of a claim that links it to the finish
// that confirms it, or to the successor its own finish confirms.
type successorState struct {
	pred atomic.Pointer[claim] // set on an unconfirmed successor; cleared once its predecessor settled
	void atomic.Bool           // not confirmed: never fires, writes fenced
	shot atomic.Bool           // fired (the boss took it): settling must not undo that silently

	smu     sync.Mutex
	next    *claim   // the successor this claim's finish confirms, if any
	settled bool     // this claim's finish is settled
	waiters []func() // run once it is
}

// afterSettle runs fn once c's finish is settled, and reports true; it
// reports false and does nothing when it already is.
func (c *claim) afterSettle(fn func()) bool {
	c.smu.Lock()
	defer c.smu.Unlock()
	if c.settled {
		return false
	}
	c.waiters = append(c.waiters, fn)
	return true
}

// markSettled records that c's finish is settled and runs what waited
// for it.
func (c *claim) markSettled() {
	c.smu.Lock()
	c.settled = true
	ws := c.waiters
	c.waiters = nil
	next := c.next
	c.next = nil
	c.smu.Unlock()
	if next != nil {
		next.pred.Store(nil) // no chain of claims kept alive through pred
	}
	for _, w := range ws {
		w()
	}
}

// successor returns the successor queued for c's next fire, if any.
func (c *claim) successor() *claim {
	c.smu.Lock()
	defer c.smu.Unlock()
	return c.next
}

// predicts reports whether t, the row c's predecessor's finish wrote, is
// the row c was built from: the claim and its next fire are as planned.
func (c *claim) predicts(t repository.Task) bool {
	p := c.task
	return t.ID == p.ID && t.Version == p.Version && t.NodeID == p.NodeID && t.Status == repository.TaskDoing &&
		t.NextStartTime.Equal(p.NextStartTime.Truncate(storePrecision)) && t.Attempt == p.Attempt && t.Cron == p.Cron
}

// storePrecision is the precision of times in the store: PostgreSQL keeps
// microseconds, and the driver truncates.
const storePrecision = time.Microsecond

// speculate queues the successor of c, whose finish f keeps the claim,
// for its next fire. c must be confirmed (held, not a successor still
// waiting) and have no children: a chain's next run reads its history.
// The successor is of c's epoch, and none is queued for a claim from
// before a silence: it would fire before any write confirmed the row is
// still this node's.
func (n *node) speculate(c *claim, f repository.Finish) {
	if !f.Keep || len(c.spec.children) > 0 || c.void.Load() || c.pred.Load() != nil || c.epoch != n.claims.currentEpoch() {
		return
	}
	t := c.task
	t.Version++
	t.NextStartTime = f.Next
	t.Attempt = f.NextAttempt
	t.Status = repository.TaskDoing
	next := newClaim(t, c.spec, n.toLocal(f.Next), c.epoch)
	next.pred.Store(c)
	c.smu.Lock()
	if c.settled {
		c.smu.Unlock()
		return
	}
	c.next = next
	c.smu.Unlock()
	n.queue.push(next)
}

// voidSuccessor voids x, a successor its predecessor's finish did not
// confirm; a job it already started is cancelled (its finish is fenced).
func (n *node) voidSuccessor(x *claim) {
	if n.claims.voidClaim(x) {
		x.stop()
		n.stats.voided.Add(1)
		n.log.Warn().Str("task", x.task.Name).Time("scheduled", x.task.NextStartTime).
			Msg("easyjob: a next fire started before its claim was confirmed, and the finish before it did not keep the claim as planned (an operator action during the run, or the claim lost); its job is cancelled and its run recorded as fenced")
	}
}
