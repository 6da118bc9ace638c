package node

import (
	"context"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// executeChain is execute for a task with children: after the root's
// successful run, the same worker runs the children (runChildren) under
// the root's execution row, holding its slot, then hands over the root's
// finish. A fire re-run after its node died resumes the chain: the root
// and the steps that completed under the abandoned run are not run again.
func (n *Node) executeChain(ctx context.Context, c *claim.Claim) {
	prior := n.priorChain(ctx, c)
	o, runCtx, endRun := n.runFire(ctx, c, prior.rootDone())
	succeeded := o.status == repository.ExecSucceeded
	if succeeded && prior.rootDone() {
		n.log.Info().Str("task", c.Spec.Name).Int64("node", int64(prior.root.NodeID)).
			Msg("easyjob: chain root completed before its node died; resuming with its steps")
	}
	var free claim.Slots // an interface: nil while the children are to run on this slot
	if !succeeded {
		free = n.pool
	}
	exec, appendRun, err := c.Recorded(n.bg.Done(), free)
	if err == nil && appendRun && succeeded {
		// The children are recorded under the root's row: a short root's
		// row is written now, not with its finish.
		exec, err = n.recordStart(ctx, c)
		appendRun = false
	}
	if err != nil {
		// Not recorded (claim lost or database away): nothing to finish;
		// reconcile releases the row if it is still ours.
		endRun(observe.RunResult{Status: o.status, Err: o.err})
		n.claims.Drop(c)
		return
	}
	if succeeded {
		n.runChildren(runCtx, c.Spec, c.Task.NextStartTime, exec.ID, prior.steps())
		n.pool.Done(c)
	}
	endRun(observe.RunResult{Status: o.status, Err: o.err})
	o.execID, o.appendRun = exec.ID, appendRun
	n.finishFired(c, o)
}

// runChildren runs the children of spec after a successful run, in
// registration order, depth first, on the calling worker. A failed child
// skips its own subtree; its siblings still run. prior holds the runs an
// interrupted earlier run of this fire recorded (priorChain, below): a step that
// completed there is not run again (one that succeeded continues with
// its own children), one that was interrupted runs again.
func (n *Node) runChildren(ctx context.Context, spec *spec.Spec, scheduled time.Time, parentExec int64, prior step) {
	for _, ch := range spec.Children {
		if ctx.Err() != nil {
			return
		}
		if r, ok := prior.child(ch.Name); ok && prior.completed(r) {
			n.log.Info().Str("task", ch.Name).Str("status", string(r.Status)).Int64("node", int64(r.NodeID)).
				Msg("easyjob: chain step completed before its node died; not run again")
			if prior.succeeded(r) {
				n.runChildren(ctx, ch, scheduled, r.ID, prior.below(r))
			}
			continue
		}
		n.runChild(ctx, ch, scheduled, parentExec)
	}
}

// runChild claims one child with a version check, records its execution
// under the parent's, runs it and its subtree, then finishes it like any
// fire (finish), never keeping the claim.
func (n *Node) runChild(ctx context.Context, ch *spec.Spec, scheduled time.Time, parentExec int64) {
	now := n.dbNow()
	if cached := n.children.get(ch.Name); cached.ID != 0 && cached.Cron != "" && cached.NextStartTime.After(now) {
		return // its own cron has not come due: no need to claim it
	}
	c, ok := n.claimChild(ctx, ch)
	if !ok {
		return
	}
	c.To(claim.Fired) // a child fires as soon as its parent's worker claimed it
	sched := n.scheduleFor(&c.Task, ch)
	if !sched.Empty() {
		// A child with its own cron runs only when that cron came due.
		if c.Task.NextStartTime.After(now) {
			n.release(n.bg, "child not due", n.claims.Drop(c))
			n.children.forget(ch.Name) // version moved: re-read next time
			return
		}
		scheduled = c.Task.NextStartTime
	}
	exec, err := n.store.StartExecution(ctx, c.Fence(), repository.Execution{
		ParentExecutionID: parentExec, ScheduledAt: scheduled, Attempt: 1,
	})
	c.SetStarted(exec, err)
	if err != nil {
		n.claims.Drop(c)
		n.log.Warn().Err(err).Str("task", ch.Name).Msg("easyjob: could not record child start; skipping its subtree")
		return
	}
	runCtx, endRun := n.fired(ctx, ch, &c.Task, scheduled, n.dbNow(), "")
	status, began, ran, runErr := n.call(runCtx, ch, &c.Task, scheduled)
	if status == repository.ExecSucceeded {
		n.runChildren(runCtx, ch, scheduled, exec.ID, step{})
	}
	endRun(observe.RunResult{Status: status, Err: runErr})
	next := c.Task.NextStartTime
	if t, ok := sched.Next(now); ok {
		next = t
	}
	res := n.finish(c, repository.Finish{
		Claim: c.Fence(), ExecutionID: exec.ID, Status: status, Error: errText(runErr),
		Next: next, NextAttempt: 1, Cron: c.Task.Cron, Started: began, Ran: ran,
	})
	n.children.set(ch.Name, res.Task) // zero when not applied: re-read next time
}

// claimChild claims the child row, using the last known version first and
// re-reading the row once when that is stale. The claim is in the claim
// set before reconcile may look at it.
func (n *Node) claimChild(ctx context.Context, ch *spec.Spec) (*claim.Claim, bool) {
	for attempt := 0; attempt < 2; attempt++ {
		row := n.children.get(ch.Name)
		if row.ID == 0 || attempt > 0 {
			var err error
			if row, err = n.store.Task(ctx, n.cfg.Group, ch.Name); err != nil {
				n.log.Warn().Err(err).Str("task", ch.Name).Msg("easyjob: could not read child task")
				return nil, false
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
			n.log.Warn().Err(err).Str("task", ch.Name).Msg("easyjob: could not claim child")
			return nil, false
		}
		if c != nil {
			return c, true
		}
		n.children.forget(ch.Name)
	}
	return nil, false
}

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
	n.claims.Add(c)
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

// A chain re-run after its node died resumes: the steps that completed
// under the abandoned run are not run again.

// priorRun is what an earlier run of the same fire of a chain did before
// its node died: the runs recorded under each run, by task name. A peer
// that re-runs the fire resumes the chain from it instead of re-running
// the steps that completed.
type priorRun struct {
	root  repository.Execution
	under map[int64]map[string]repository.Execution // parent run id -> child task -> its run
}

// priorChain returns the abandoned earlier run of c's fire, when c is a
// chain whose last run was abandoned (recovery marks it), or nil.
func (n *Node) priorChain(ctx context.Context, c *claim.Claim) *priorRun {
	if len(c.Spec.Children) == 0 || c.Task.LastStatus != repository.ExecAbandoned {
		return nil
	}
	runs, err := n.store.ChainRun(ctx, c.Task.ID, c.Task.NextStartTime)
	if err != nil {
		n.log.Warn().Err(err).Str("task", c.Spec.Name).Msg("easyjob: could not read the interrupted chain; running it whole")
		return nil
	}
	if len(runs) == 0 {
		return nil
	}
	p := &priorRun{root: runs[0], under: map[int64]map[string]repository.Execution{}}
	for _, r := range runs[1:] {
		if p.under[r.ParentExecutionID] == nil {
			p.under[r.ParentExecutionID] = map[string]repository.Execution{}
		}
		p.under[r.ParentExecutionID][r.TaskName] = r
	}
	return p
}

// rootDone reports whether the root's job had succeeded (see succeeded).
func (p *priorRun) rootDone() bool { return p != nil && len(p.under[p.root.ID]) > 0 }

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
