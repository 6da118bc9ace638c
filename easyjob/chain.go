package easyjob

import (
	"context"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// runChildren runs the children of spec after a successful run, in
// registration order, depth first, on the calling worker. A failed child
// skips its own subtree; its siblings still run. prior holds the runs an
// interrupted earlier run of this fire recorded (resume.go): a step that
// completed there is not run again (one that succeeded continues with
// its own children), one that was interrupted runs again.
func (n *node) runChildren(ctx context.Context, spec *taskSpec, scheduled time.Time, parentExec int64, prior step) {
	for _, ch := range spec.children {
		if ctx.Err() != nil {
			return
		}
		if r, ok := prior.child(ch.name); ok && prior.completed(r) {
			n.log.Info().Str("task", ch.name).Str("status", string(r.Status)).Int64("node", int64(r.NodeID)).
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
func (n *node) runChild(ctx context.Context, ch *taskSpec, scheduled time.Time, parentExec int64) {
	now := n.dbNow()
	if cached := n.children.get(ch.name); cached.ID != 0 && cached.Cron != "" && cached.NextStartTime.After(now) {
		return // its own cron has not come due: no need to claim it
	}
	c, ok := n.claimChild(ctx, ch)
	if !ok {
		return
	}
	sched := n.scheduleFor(&c.task, ch)
	if !sched.empty() {
		// A child with its own cron runs only when that cron came due.
		if c.task.NextStartTime.After(now) {
			n.release(n.bg, "child not due", n.claims.drop(c))
			n.children.forget(ch.name) // version moved: re-read next time
			return
		}
		scheduled = c.task.NextStartTime
	}
	exec, err := n.store.StartExecution(ctx, c.fence(), repository.Execution{
		ParentExecutionID: parentExec, ScheduledAt: scheduled, Attempt: 1,
	})
	c.setStarted(exec, err)
	if err != nil {
		n.claims.drop(c)
		n.log.Warn().Err(err).Str("task", ch.name).Msg("easyjob: could not record child start; skipping its subtree")
		return
	}
	runCtx, endRun := n.fired(ctx, ch, &c.task, scheduled, n.dbNow(), "")
	status, _, runErr := n.call(runCtx, ch, &c.task, scheduled)
	if status == repository.ExecSucceeded {
		n.runChildren(runCtx, ch, scheduled, exec.ID, step{})
	}
	endRun(RunResult{Status: status, Err: runErr})
	next := c.task.NextStartTime
	if t, ok := sched.next(now); ok {
		next = t
	}
	res := n.finish(c, repository.Finish{
		Claim: c.fence(), ExecutionID: exec.ID, Status: status, Error: errText(runErr),
		Next: next, NextAttempt: 1, Cron: c.task.Cron,
	})
	n.children.set(ch.name, res.Task) // zero when not applied: re-read next time
}

// claimChild claims the child row, using the last known version first and
// re-reading the row once when that is stale. The claim is in the claim
// set before reconcile may look at it.
func (n *node) claimChild(ctx context.Context, ch *taskSpec) (*claim, bool) {
	for attempt := 0; attempt < 2; attempt++ {
		row := n.children.get(ch.name)
		if row.ID == 0 || attempt > 0 {
			var err error
			if row, err = n.store.Task(ctx, n.cfg.Group, ch.name); err != nil {
				n.log.Warn().Err(err).Str("task", ch.name).Msg("easyjob: could not read child task")
				return nil, false
			}
		}
		if row.Status != repository.TaskPending {
			n.children.forget(ch.name)
			if attempt > 0 {
				n.log.Warn().Str("task", ch.name).Str("status", row.Status.String()).Msg("easyjob: child not pending; skipping it")
			}
			continue
		}
		c, err := n.claimRow(ctx, ch, row)
		if err != nil {
			n.log.Warn().Err(err).Str("task", ch.name).Msg("easyjob: could not claim child")
			return nil, false
		}
		if c != nil {
			return c, true
		}
		n.children.forget(ch.name)
	}
	return nil, false
}

// claimRow claims one child row and holds it, under the claim gate; nil
// when a peer or an operator moved the row first.
func (n *node) claimRow(ctx context.Context, ch *taskSpec, row repository.Task) (*claim, error) {
	n.claims.gate.RLock()
	defer n.claims.gate.RUnlock()
	epoch := n.claims.currentEpoch() // see claimRefs
	won, err := n.store.Claim(ctx, n.id(), []repository.TaskRef{row.Ref()})
	if err != nil || len(won) == 0 {
		return nil, err
	}
	if n.claims.currentEpoch() != epoch {
		n.release(ctx, "child claimed across a silence", fencesOf(won))
		return nil, nil
	}
	c := newClaim(won[0], ch, time.Time{}, epoch)
	n.claims.add(c)
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
