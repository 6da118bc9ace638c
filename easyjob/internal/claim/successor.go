package claim

import (
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
	next := New(t, c.Spec, localAt, c.Epoch)
	next.pred.Store(c)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.void || c.state.Final() {
		return nil
	}
	c.next = next
	return next
}

// Pred is the predecessor whose finish must confirm c, or nil once
// confirmed (or for a claim the database gave).
func (c *Claim) Pred() *Claim { return c.pred.Load() }

// Queued returns the successor queued for c's next fire, if any.
func (c *Claim) Queued() *Claim {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

// Predicts reports whether t, the row c's predecessor's finish wrote, is
// the row c was built from: the claim and its next fire are as planned.
func (c *Claim) Predicts(t repository.Task) bool {
	p := c.Task
	return t.ID == p.ID && t.Version == p.Version && t.NodeID == p.NodeID && t.Status == repository.TaskDoing &&
		t.NextStartTime.Equal(p.NextStartTime.Truncate(storePrecision)) && t.Attempt == p.Attempt && t.Cron == p.Cron
}

// storePrecision is the precision of times in the store: PostgreSQL keeps
// microseconds, and the driver truncates.
const storePrecision = time.Microsecond
