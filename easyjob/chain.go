package easyjob

import (
	"context"
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// runChildren runs the children of spec after a successful run, in
// registration order, depth first, on the calling worker. A failed child
// skips its own subtree; its siblings still run.
func (n *node) runChildren(ctx context.Context, spec *taskSpec, scheduled time.Time, parentExec int64) {
	for _, ch := range spec.children {
		if ctx.Err() != nil {
			return
		}
		n.runChild(ctx, ch, scheduled, parentExec)
	}
}

// runChild claims one child with a version check, records its execution
// under the parent's, runs it and its subtree, then finishes it.
func (n *node) runChild(ctx context.Context, ch *taskSpec, scheduled time.Time, parentExec int64) {
	now := n.dbNow()
	if cached := n.child(ch.name); cached.ID != 0 && cached.Cron != "" && cached.NextStartTime.After(now) {
		return // its own cron has not come due: no need to claim it
	}
	c, ok := n.claimChild(ctx, ch)
	if !ok {
		return
	}
	row := c.task
	sched := n.scheduleFor(row, ch)
	if !sched.empty() {
		// A child with its own cron runs only when that cron came due.
		if row.NextStartTime.After(now) {
			n.forget(c)
			n.releaseRows(n.bg, []repository.Task{row}, "child not due")
			n.setChild(row.Name, repository.Task{}) // version moved: re-read next time
			return
		}
		scheduled = row.NextStartTime
	}
	exec, err := n.store.StartExecution(ctx, row.Claim(), repository.Execution{
		ParentExecutionID: parentExec, ScheduledAt: scheduled, Attempt: 1,
	})
	if err != nil {
		n.forget(c)
		n.log.Warn().Err(err).Str("task", ch.name).Msg("easyjob: could not record child start; skipping its subtree")
		return
	}
	status, runErr := n.call(ctx, ch, row, scheduled, row.Claim())
	if status == repository.ExecSucceeded {
		n.runChildren(ctx, ch, scheduled, exec.ID)
	}
	next := row.NextStartTime
	if t, ok := sched.next(now); ok {
		next = t
	}
	res := n.completer.finish(n.bg, repository.Finish{
		Claim: row.Claim(), ExecutionID: exec.ID, Status: status, Error: errText(runErr),
		Next: next, NextAttempt: 1, Cron: row.Cron,
	})
	n.forget(c)
	n.counts.add(time.Now())
	if res.Err != nil {
		if errors.Is(res.Err, repository.ErrClaimLost) {
			n.stats.fenced.Add(1)
		}
		n.setChild(ch.name, repository.Task{})
		n.log.Warn().Err(res.Err).Str("task", ch.name).Msg("easyjob: child finish not applied")
		return
	}
	n.setChild(ch.name, res.Task)
}

// claimChild claims the child row, using the last known version first and
// re-reading the row once when that is stale. The claim is held (in the
// held map) before reconcile may look at it.
func (n *node) claimChild(ctx context.Context, ch *taskSpec) (*claimed, bool) {
	for attempt := 0; attempt < 2; attempt++ {
		row := n.child(ch.name)
		if row.ID == 0 || attempt > 0 {
			var err error
			if row, err = n.store.Task(ctx, n.cfg.Group, ch.name); err != nil {
				n.log.Warn().Err(err).Str("task", ch.name).Msg("easyjob: could not read child task")
				return nil, false
			}
		}
		if row.Status != repository.TaskPending {
			n.setChild(ch.name, repository.Task{})
			if attempt > 0 {
				n.log.Warn().Str("task", ch.name).Str("status", row.Status.String()).Msg("easyjob: child not pending; skipping it")
			}
			continue
		}
		if c, ok, err := n.claimOne(ctx, ch, row); err != nil {
			n.log.Warn().Err(err).Str("task", ch.name).Msg("easyjob: could not claim child")
			return nil, false
		} else if ok {
			return c, true
		}
		n.setChild(ch.name, repository.Task{})
	}
	return nil, false
}

// claimOne claims one child row and holds it as running under the claim lock.
func (n *node) claimOne(ctx context.Context, ch *taskSpec, row repository.Task) (*claimed, bool, error) {
	n.claimMu.RLock()
	defer n.claimMu.RUnlock()
	won, err := n.store.Claim(ctx, n.self, []repository.TaskRef{row.Ref()})
	if err != nil || len(won) == 0 {
		return nil, false, err
	}
	c := &claimed{task: won[0], spec: ch, index: -1, state: stateRunning, epoch: n.epoch.Load()}
	n.mu.Lock()
	n.held[c.task.ID] = c
	n.mu.Unlock()
	return c, true, nil
}

func (n *node) child(name string) repository.Task {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.children[name]
}

func (n *node) setChild(name string, t repository.Task) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.children[name] = t
}
