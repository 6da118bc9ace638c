package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// executeChain is execute for a task with children: after the root's
// successful run, the same worker runs the children (runChildren) under
// the root's execution row, holding its slot, then hands over the root's
// finish. A fire run again resumes the chain (priorChain): the root and
// the steps that completed before are not run again. A chain interrupted
// by the database or a shutdown after its root ran is not lost: the root
// is recorded when the database answers, and its finish leaves the fire
// due, so the next run of it (here or on a peer) resumes the steps left.
func (n *Node) executeChain(ctx context.Context, c *claim.Claim) {
	prior, err := n.priorChain(c)
	if err != nil {
		// The node stops with the database away: whether an earlier run
		// of this fire ran the root is unknown, and running it could run
		// it twice. Nothing ran: reconcile or a peer takes the fire.
		n.pool.Done(c)
		n.claims.Drop(c)
		return
	}
	// A resumed chain's root (done) is not a new fire: no misfire policy
	// skips the steps it left.
	skip := c.StartFailed() || (!prior.rootDone() && c.Skips())
	o, runCtx, endRun := n.runFire(ctx, c, skip, prior.rootDone())
	succeeded := o.status == repository.ExecSucceeded
	if succeeded && prior.rootDone() {
		n.log.Info().Str("task", c.Spec.Name).Int64("node", int64(prior.root.NodeID)).
			Msg("easyjob: chain root completed in an earlier run of this fire; resuming with its steps")
	}
	var free claim.Slots // an interface: nil while the children are to run on this slot
	if !succeeded {
		free = n.pool
	}
	exec, appendRun, err := c.Recorded(n.bg.Done(), free)
	if err == nil && appendRun && succeeded {
		// The children are recorded under the root's row: a short root's
		// row is written now, not with its finish, and waits for the
		// database if it is away (its job ran: the run must be recorded).
		exec, err = n.recordRoot(c)
		appendRun = false
		if errors.Is(err, repository.ErrClaimLost) {
			// A peer took the fire (this node was cut off past DeadAfter):
			// the run is recorded as fenced by its finish; the peer runs
			// the fire (at least once).
			n.pool.Done(c)
			endRun(observe.RunResult{Status: o.status, Err: o.err})
			o.appendRun = true
			n.finishFired(c, o)
			return
		}
	}
	if err != nil {
		// Not recorded (the node stops with the database away): nothing
		// to finish; reconcile or a peer's recovery runs the fire again.
		endRun(observe.RunResult{Status: o.status, Err: o.err})
		n.claims.Drop(c)
		return
	}
	if succeeded {
		o.resume = n.runChildren(runCtx, c.Spec, c.Task.NextStartTime, exec.ID, c.Batch(), prior.steps())
		// Cut short by its overlap policy (the next fire came) or by an
		// operator's cancel, the chain is not resumed: the next fire
		// replaces it.
		o.resume = o.resume && overlapOf(runCtx) == nil && cancelOf(runCtx) == nil
		n.pool.Done(c)
		if o.resume {
			n.log.Warn().Str("task", c.Spec.Name).Time("scheduled", c.Task.NextStartTime).
				Msg("easyjob: chain interrupted (database or shutdown); the fire stays due and its next run resumes the steps left")
		}
	}
	endRun(observe.RunResult{Status: o.status, Err: o.err})
	o.execID, o.appendRun = exec.ID, appendRun
	o.resume = o.resume || interruptedAgain(c, o)
	n.finishFired(c, o)
}

// recordRoot writes the start record of chain root c, whose job ran,
// retrying while the database is away: until it is written, the claim is
// lost (a peer took the fire), or the node stops.
func (n *Node) recordRoot(c *claim.Claim) (repository.Execution, error) {
	for attempt := 1; ; attempt++ {
		e, err := n.store.StartExecution(n.bg, c.Fence(), *c.RunRecord())
		if err == nil || errors.Is(err, repository.ErrClaimLost) || n.bg.Err() != nil {
			c.SetStarted(e, err)
			return e, err
		}
		wait := schedule.Backoff(attempt, 50*time.Millisecond, maxWriteRetry) // as finishes: written within half a second of the database's return
		n.outage.fail("StartExecution", err, wait)
		if !schedule.Sleep(n.bg, wait) {
			c.SetStarted(e, err)
			return e, err
		}
	}
}

// runChildren runs the children of spec after a successful run, in
// registration order, depth first, on the calling worker. A failed child
// skips its own subtree; its siblings still run. prior holds the runs an
// earlier run of this fire recorded (priorChain, below): a step that
// completed there is not run again (one that succeeded continues with
// its own children), one that was interrupted runs again. It reports
// whether the chain was interrupted (the database away at a hand-over,
// the run cancelled): the steps left then run when the fire runs again.
func (n *Node) runChildren(ctx context.Context, spec *spec.Spec, scheduled time.Time, parentExec, batch int64, prior step) (interrupted bool) {
	for _, ch := range spec.Children {
		if ctx.Err() != nil {
			return true
		}
		if r, ok := prior.child(ch.Name); ok && prior.completed(r) {
			n.log.Info().Str("task", ch.Name).Str("status", string(r.Status)).Int64("node", int64(r.NodeID)).
				Msg("easyjob: chain step completed in an earlier run of this fire; not run again")
			if prior.succeeded(r) && n.runChildren(ctx, ch, scheduled, r.ID, batch, prior.below(r)) {
				return true
			}
			continue
		}
		if n.runChild(ctx, ch, scheduled, parentExec, batch) {
			return true
		}
	}
	return false
}

// runChild claims one child with a version check, records its execution
// under the parent's, runs it and its subtree, then finishes it like any
// fire (finish), never keeping the claim. It reports whether the chain was
// interrupted there: the database did not answer at the hand-over, or the
// run was cancelled.
func (n *Node) runChild(ctx context.Context, ch *spec.Spec, scheduled time.Time, parentExec, batch int64) (interrupted bool) {
	now := n.dbNow()
	if cached := n.children.get(ch.Name); cached.ID != 0 && cached.Cron != "" && cached.NextStartTime.After(now) {
		return false // its own cron has not come due: no need to claim it
	}
	c, err := n.claimChild(ctx, ch)
	if err != nil {
		n.log.Warn().Err(err).Str("task", ch.Name).Msg("easyjob: could not claim chain step")
		return true
	}
	if c == nil {
		return false // not claimable (paused, or taken by an operator's action): its subtree is skipped
	}
	c.To(claim.Fired) // a child fires as soon as its parent's worker claimed it
	sched := c.Sched
	if !sched.Empty() {
		// A child with its own cron runs only when that cron came due.
		if c.Task.NextStartTime.After(now) {
			n.release(n.bg, "child not due", n.claims.Drop(c))
			n.children.forget(ch.Name) // version moved: re-read next time
			return false
		}
		scheduled = c.Task.NextStartTime
	}
	exec, err := n.store.StartExecution(ctx, c.Fence(), repository.Execution{
		ParentExecutionID: parentExec, ScheduledAt: scheduled, Attempt: 1, Kind: repository.RunChain, Revision: c.Task.Revision,
		Batch: batch, // a backfill's step: a row of its own beside the fire's own run of the step
	})
	c.SetStarted(exec, err)
	if err != nil {
		n.claims.Drop(c)
		n.children.forget(ch.Name)
		if errors.Is(err, repository.ErrClaimLost) {
			n.log.Warn().Err(err).Str("task", ch.Name).Msg("easyjob: chain step taken by another node; skipping its subtree")
			return false
		}
		n.log.Warn().Err(err).Str("task", ch.Name).Msg("easyjob: could not record chain step start")
		return true
	}
	if !n.mayStart(ctx, c) {
		// The last check before user code, as for a root (worker.go): a
		// node frozen or cut off since the step's start record may be
		// dead to its peers, which may run the step now. The fire stays
		// due; whoever holds it resumes the chain.
		n.release(n.bg, "silence since the chain step's claim", n.claims.Drop(c))
		n.children.forget(ch.Name)
		return true
	}
	runCtx, endRun := n.fired(ctx, ch, &c.Task, scheduled, n.dbNow(), "", repository.RunChain)
	result := resultFor(ch)
	status, began, ran, log, runErr := n.call(runCtx, ch, &c.Task, scheduled, batch, nil, result)
	if status == repository.ExecFenced {
		// Cut short by its node's silence: abandoned, as by a node's
		// death, so that the chain's next run of the fire runs the step
		// again (completed, below); the fire stays due (runChildren
		// reports the chain interrupted).
		status = repository.ExecAbandoned
	}
	if status == repository.ExecSucceeded {
		interrupted = n.runChildren(runCtx, ch, scheduled, exec.ID, batch, step{})
	}
	endRun(observe.RunResult{Status: status, Err: runErr})
	next := c.Task.NextStartTime
	if t, ok := sched.Next(now); ok {
		next = t
	}
	res := n.finish(c, repository.Finish{
		Claim: c.Fence(), ExecutionID: exec.ID, Status: status, Error: errText(runErr),
		Next: next, NextAttempt: 1, Cron: c.Task.Cron, Revision: c.Task.Revision, Started: began, Ran: ran, Log: log,
		Result: resultText(result, status),
	})
	n.children.set(ch.Name, res.Task) // zero when not applied: re-read next time
	if res.Err == nil {
		n.stepsAfter(ch) // the DAG steps after the step may be due now
	}
	if res.Err != nil && !errors.Is(res.Err, repository.ErrClaimLost) {
		return true // its finish not written (the node stops): the next run sees it unfinished and runs it again
	}
	return interrupted
}

// claimChild claims the child row, using the last known version first and
// re-reading the row once when that is stale. The claim is in the claim
// set before reconcile may look at it. It returns nil and no error when
// the row cannot be claimed (not pending, or moved twice meanwhile), and
// the error of a read or claim the database did not answer. A row another
// node holds is waited for (childHeld) first.
func (n *Node) claimChild(ctx context.Context, ch *spec.Spec) (*claim.Claim, error) {
	for attempt := 0; attempt < 2; attempt++ {
		row := n.children.get(ch.Name)
		if row.ID == 0 || attempt > 0 {
			var err error
			if row, err = n.store.Task(ctx, n.cfg.Group, ch.Name); err != nil {
				return nil, fmt.Errorf("read chain step %q: %w", ch.Name, err)
			}
			if row.Status == repository.TaskDoing {
				if row, err = n.childHeld(ctx, ch.Name); err != nil {
					return nil, err
				}
			}
		}
		if row.Status != repository.TaskPending {
			n.children.forget(ch.Name)
			if attempt > 0 {
				n.log.Warn().Str("task", ch.Name).Str("status", row.Status.String()).Msg("easyjob: child not pending; skipping it")
			}
			continue
		}
		c, err := n.claimRow(ctx, ch, row)
		if err != nil {
			n.children.forget(ch.Name)
			return nil, fmt.Errorf("claim chain step %q: %w", ch.Name, err)
		}
		if c != nil {
			return c, nil
		}
		n.children.forget(ch.Name)
	}
	return nil, nil
}

// childHeld waits for the row of chain step name, held by a node: the
// node that ran the chain before (a resumed fire: it was cut off while
// the step was claimed, and releases the row, or its peers recover it,
// within DeadAfter and a recovery pass) or one running the step now.
// Skipping it would lose the step for this fire. It returns the row once
// no node holds it, and an error when it is still held after that time
// (the chain is interrupted: the fire stays due).
func (n *Node) childHeld(ctx context.Context, name string) (repository.Task, error) {
	deadline := time.Now().Add(n.cfg.DeadAfter + 2*n.cfg.RecoverInterval)
	for {
		if !schedule.Sleep(ctx, childHeldPoll) {
			return repository.Task{}, fmt.Errorf("chain step %q held by another node: %w", name, ctx.Err())
		}
		row, err := n.store.Task(ctx, n.cfg.Group, name)
		if err != nil {
			return row, fmt.Errorf("read chain step %q: %w", name, err)
		}
		if row.Status != repository.TaskDoing {
			return row, nil
		}
		if time.Now().After(deadline) {
			return row, fmt.Errorf("chain step %q still held by node %d", name, row.NodeID)
		}
	}
}

// childHeldPoll is how often childHeld reads the held step's row.
const childHeldPoll = 250 * time.Millisecond

// claimRow claims one child row and holds it, under the claim gate; nil
// when a peer or an operator moved the row first.
func (n *Node) claimRow(ctx context.Context, ch *spec.Spec, row repository.Task) (*claim.Claim, error) {
	defer n.claims.Hold()()
	epoch := n.claims.Epoch() // see claimRefs
	won, err := n.store.Claim(ctx, n.id(), []repository.TaskRef{row.Ref()})
	if err != nil || len(won) == 0 {
		return nil, err
	}
	if n.claims.Epoch() != epoch {
		n.release(ctx, "child claimed across a silence", fencesOf(won))
		return nil, nil
	}
	c := claim.New(won[0], ch, time.Time{}, epoch)
	n.claims.Keep(c)
	return c, nil
}

// childRows caches the last known rows of child tasks, so a chain step
// usually claims its child without reading it first.
type childRows struct {
	mu   sync.Mutex
	rows map[string]repository.Task
}

func (r *childRows) get(name string) repository.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rows[name]
}

func (r *childRows) set(name string, t repository.Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rows == nil {
		r.rows = map[string]repository.Task{}
	}
	r.rows[name] = t
}

func (r *childRows) forget(name string) { r.set(name, repository.Task{}) }

// A chain run again for the same fire (its node died, or the database or
// a shutdown interrupted it) resumes: the steps that completed before are
// not run again.

// priorRun is what an earlier run of the same fire of a chain did before
// it was cut short: the runs recorded under each run, by task name. A peer
// that re-runs the fire resumes the chain from it instead of re-running
// the steps that completed.
type priorRun struct {
	root  repository.Execution
	under map[int64]map[string]repository.Execution // parent run id -> child task -> its run
}

// priorChain returns the earlier run of c's fire, when c is a chain whose
// fire ran before (its node died, or the database or a shutdown
// interrupted it), or nil. It waits for the database if it is away (the
// worker holds its slot): running the chain without knowing could run a
// step twice. It fails only when the node stops first.
func (n *Node) priorChain(c *claim.Claim) (*priorRun, error) {
	if len(c.Spec.Children) == 0 || (!mayHaveRun(c.Task) && !c.Backfill()) {
		return nil, nil
	}
	var runs []repository.Execution
	for attempt := 1; ; attempt++ {
		var err error
		if runs, err = n.store.ChainRun(n.bg, c.Task.ID, c.Task.NextStartTime); err == nil {
			break
		}
		wait := schedule.Backoff(attempt, 50*time.Millisecond, maxWriteRetry)
		n.outage.fail("ChainRun", err, wait)
		if !schedule.Sleep(n.bg, wait) {
			return nil, err
		}
	}
	if len(runs) > 0 && runs[0].Batch != c.Batch() {
		// The fire's own run, for a backfill of it (or a backfill's run,
		// for the fire's own): not this run's to resume.
		runs = nil
	}
	if len(runs) == 0 {
		return nil, nil
	}
	p := &priorRun{root: runs[0], under: map[int64]map[string]repository.Execution{}}
	for _, r := range runs[1:] {
		if p.under[r.ParentExecutionID] == nil {
			p.under[r.ParentExecutionID] = map[string]repository.Execution{}
		}
		p.under[r.ParentExecutionID][r.TaskName] = r
	}
	return p, nil
}

// mayHaveRun reports whether fire t may have run before: its node died
// (recovery marked the last run abandoned), or its last finish left it due
// (a chain cut short keeps its fire; so do a trigger during a run and a
// catch-up, which a read then finds empty). A fire planned ahead of its
// last finish, the usual case, has not run: no read, no round trip.
func mayHaveRun(t repository.Task) bool {
	return t.LastStatus == repository.ExecAbandoned ||
		(!t.LastFinishedAt.IsZero() && !t.NextStartTime.After(t.LastFinishedAt))
}

// rootDone reports whether the root's job had succeeded (see succeeded).
func (p *priorRun) rootDone() bool {
	return p != nil && (p.root.Status == repository.ExecSucceeded || len(p.under[p.root.ID]) > 0)
}

// step is the earlier run of one chain step under parent run parent.
type step struct {
	p      *priorRun
	parent int64
}

// steps returns the earlier runs under the root, or a zero step.
func (p *priorRun) steps() step {
	if !p.rootDone() {
		return step{}
	}
	return step{p: p, parent: p.root.ID}
}

// child returns the earlier run of the child named name, if any.
func (s step) child(name string) (repository.Execution, bool) {
	if s.p == nil {
		return repository.Execution{}, false
	}
	r, ok := s.p.under[s.parent][name]
	return r, ok
}

// succeeded reports whether run r's job succeeded: recorded so, or a
// child run is recorded under it (children run only after a success; a
// step stays open until its children are done, so its node may have died
// with it still running).
func (s step) succeeded(r repository.Execution) bool {
	return r.Status == repository.ExecSucceeded || s.p != nil && len(s.p.under[r.ID]) > 0
}

// completed reports whether run r's job ended (in success or not) before
// its node died; an interrupted one runs again.
func (s step) completed(r repository.Execution) bool {
	return s.succeeded(r) || r.Status != repository.ExecAbandoned && r.Status != repository.ExecRunning
}

// below returns the earlier runs under run r.
func (s step) below(r repository.Execution) step {
	if s.p == nil {
		return step{}
	}
	return step{p: s.p, parent: r.ID}
}
