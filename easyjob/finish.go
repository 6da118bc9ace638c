package easyjob

import (
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// maxRetryBackoff caps the exponential retry backoff.
const maxRetryBackoff = 10 * time.Minute

// outcome is the finish of a root fire: the next fire as planned, a retry
// when the run failed and retries are left, and whether the claim is kept
// for the next fire or handed to a peer.
func (n *node) outcome(c *claim, execID int64, status repository.ExecStatus, runErr error, next firePlan) repository.Finish {
	f := repository.Finish{
		Claim: c.fence(), ExecutionID: execID, Status: status, Error: errText(runErr),
		Next: next.next, NextAttempt: 1, Done: next.done, Cron: c.task.Cron,
	}
	attempt := max(c.task.Attempt, 1)
	switch {
	case status != repository.ExecSucceeded && status != repository.ExecSkipped && c.task.Attempt <= c.spec.opts.MaxRetries:
		// A retry is a pending fire any node may claim, so the claim is not kept.
		f.Next = n.dbNow().Add(backoff(attempt, c.spec.opts.RetryBackoff, maxRetryBackoff))
		f.NextAttempt, f.Done, f.Handoff = attempt+1, false, true
	case !n.keepFor(f.Next):
	case !n.stillMine(c.task):
		// The strategy gives the task to a peer now (the live set changed):
		// the finish itself hands it over, with a wake-up, so the new owner
		// claims it before its next fire and no extra release is written.
		f.Handoff = true
	default:
		f.Keep = true
	}
	return f
}

// keepFor reports whether a finish may keep the claim for a next fire at
// next: when that fire falls in the fetch window and the node is healthy.
func (n *node) keepFor(next time.Time) bool {
	return !n.suspect() && !next.IsZero() && next.Sub(n.dbNow()) <= n.cfg.FetchWindow
}

// stillMine reports whether the strategy gives t to this node on the
// current live view, and the node is not leaving.
func (n *node) stillMine(t repository.Task) bool {
	return !n.stopping.Load() && n.picker.keeps(t)
}

// finish writes f, the finish of claim c (a root fire or a chain child),
// through the completer and settles c by the result: a claim the write
// kept is queued again for its next fire; any other is forgotten.
func (n *node) finish(c *claim, f repository.Finish) repository.FinishResult {
	// A kept claim is renewed at version+1 by this write: reconcile must not
	// compare the row with the claim set between the write and the renewal
	// below, or it would release a claim this node still holds.
	n.claims.gate.RLock()
	defer n.claims.gate.RUnlock()
	epoch := n.claims.currentEpoch() // a kept claim renewed across a silence is void (see claimRefs)
	res := n.completer.finish(n.bg, f, c.localAt)
	n.counts.add(time.Now())
	switch {
	case errors.Is(res.Err, repository.ErrClaimLost):
		// Fenced, or a retry of a finish whose first reply was lost: then
		// the row may still name this node, which reconcile sorts out.
		n.dirty.Store(true)
		n.stats.fenced.Add(1)
		n.claims.drop(c)
		n.log.Warn().Str("task", c.task.Name).Msg("easyjob: finish fenced: the claim was lost while running; result recorded, not applied")
	case res.Err != nil:
		n.dirty.Store(true)
		n.claims.drop(c)
		n.log.Error().Err(res.Err).Str("task", c.task.Name).Msg("easyjob: finish not written")
	case res.Task.Status == repository.TaskDoing && res.Task.NodeID == n.id():
		next := newClaim(res.Task, c.spec, n.toLocal(res.Task.NextStartTime), epoch)
		// A live view that changed during the write does not undo the keep:
		// the claim is ours and fires once more here; the next finish hands
		// it over in its own statement. Releasing it now would cost one
		// statement per task just when nodes join (a release storm).
		switch {
		case n.claims.renew(c, next, func() bool { return !n.stopping.Load() && n.claims.currentEpoch() == epoch }):
			n.queue.push(next)
		case n.stopping.Load():
			// Shutdown releases every row still claimed in one statement
			// once the jobs are done (releaseHeld).
		default:
			n.release(n.bg, "kept after the node dropped its claims", []repository.Claim{res.Task.Claim()})
		}
	default:
		if f.Handoff && res.Task.Status == repository.TaskPending {
			n.stats.handedOff.Add(1)
			n.watchHandover(res.Task, c.spec)
			n.observe(Event{Kind: EventHandover, Task: c.spec.name})
		}
		n.claims.drop(c)
	}
	if n.hooks != nil {
		n.hooks.fireFinished.send(res)
	}
	return res
}
