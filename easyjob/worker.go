package easyjob

import (
	"context"

	"github.com/easyjob-go/easyjob/repository"
)

// execute runs one fired claim on its own goroutine, top to bottom: check
// the fence, call the job, run its children, free the worker slot, then
// hand over the finish, one fenced write that may keep the claim for the
// next fire, without waiting for it.
//
// The worker frees the slot when execute returns, and then runs the next
// waiting fire itself. execute frees it earlier only where it would hold
// it while waiting: on a write (a release, a start record), or on the
// children of a chain.
func (n *node) execute(ctx context.Context, c *claim) {
	// The last check before user code: a claim from before a silence, or a
	// node that may be dead to its peers, must not run (the start row is
	// written beside the job, so this check is the fence that counts).
	if c.epoch != n.claims.currentEpoch() || n.suspect() {
		n.pool.done(c)
		n.release(n.bg, "silence since the claim", n.claims.drop(c))
		return
	}
	// The next fire is computed after the job (n.plan): an on-time fire
	// always runs, and the cron arithmetic should not delay the jobs queued
	// behind it.
	o := firedOutcome{status: repository.ExecSkipped}
	runCtx, endRun := ctx, endNothing
	prior := n.priorChain(ctx, c) // a chain re-run after its node died resumes
	if (c.misfire == "" || n.plan(c).run) && !c.startFailed() {
		n.stats.fired.Add(1)
		runCtx, endRun = n.fired(ctx, c.spec, &c.task, c.task.NextStartTime, c.foundAt, c.misfire)
		if prior.rootDone() {
			o.status = repository.ExecSucceeded
			n.log.Info().Str("task", c.spec.name).Int64("node", int64(prior.root.NodeID)).
				Msg("easyjob: chain root completed before its node died; resuming with its steps")
		} else {
			o.status, o.ran, o.err = n.call(runCtx, c.spec, &c.task, c.task.NextStartTime)
		}
	}
	chain := o.status == repository.ExecSucceeded && len(c.spec.children) > 0
	var free *pool
	if !chain {
		free = n.pool // the slot is for running jobs, not for waiting on writes
	}
	exec, appendRun, err := c.recorded(n.bg.Done(), free)
	if err == nil && appendRun && chain {
		// The children are recorded under the root's row: a short root's
		// row is written now, not with its finish.
		exec, err = n.recordStart(ctx, c)
		appendRun = false
	}
	if err != nil {
		// Not recorded (claim lost or database away): nothing to finish;
		// reconcile releases the row if it is still ours.
		endRun(RunResult{Status: o.status, Err: o.err})
		n.claims.drop(c)
		return
	}
	if chain {
		n.runChildren(runCtx, c.spec, c.task.NextStartTime, exec.ID, prior.steps())
		n.pool.done(c)
	}
	endRun(RunResult{Status: o.status, Err: o.err})
	// The outcome (next fire, keep or hand over) is worked out when the
	// completer builds the finish, after the burst this fire started in;
	// a kept claim's next fire is queued then (successor.go).
	o.execID, o.appendRun = exec.ID, appendRun
	n.finishFired(c, o)
}

// plan is the next fire of fired claim c, as of the time it was found due.
func (n *node) plan(c *claim) firePlan {
	return planFire(n.scheduleFor(&c.task, c.spec), c.spec.opts, c.task.NextStartTime, c.foundAt)
}

// recordStart writes c's start record at once, in its own statement.
func (n *node) recordStart(ctx context.Context, c *claim) (repository.Execution, error) {
	e, err := n.store.StartExecution(ctx, c.fence(), *c.runRecord())
	c.setStarted(e, err)
	return e, err
}
