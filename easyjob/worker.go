package easyjob

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// maxRetryBackoff caps the exponential retry backoff.
const maxRetryBackoff = 10 * time.Minute

// execute runs one started claim on its own goroutine: call the job, run
// its children, free the worker slot, then finish with one fenced write
// that may keep the claim for the next fire.
func (n *node) execute(ctx context.Context, c *claimed) {
	// The next fire is computed after the job: an on-time fire always runs,
	// and the cron arithmetic should not delay the jobs queued behind it.
	plan := func() firePlan {
		return planFire(n.scheduleFor(c.task, c.spec), c.spec.opts, c.task.NextStartTime, c.foundAt)
	}
	run := c.misfire == "" || plan().run
	status, runErr := repository.ExecSkipped, error(nil)
	// The last check before user code: a claim from before a silence, or a
	// node that may be dead to its peers, must not run (the start row is
	// written beside the job, so this check is the fence that counts).
	if c.epoch != n.epoch.Load() || n.suspect() {
		n.pool.release()
		n.forget(c)
		n.release(n.bg, []*claimed{c}, "silence since the claim")
		return
	}
	if run && !n.startFailed(c) {
		n.stats.fired.Add(1)
		status, runErr = n.call(ctx, c.spec, c.task, c.task.NextStartTime, c.task.Claim())
	}
	chain := status == repository.ExecSucceeded && len(c.spec.children) > 0
	if !chain {
		n.pool.release() // the slot is for running jobs, not for waiting on writes
	}
	if err := n.waitStarted(c); err != nil {
		// Not recorded (claim lost or database away): nothing to finish;
		// reconcile releases the row if it is still ours.
		if chain {
			n.pool.release()
		}
		n.forget(c)
		return
	}
	if chain {
		n.runChildren(ctx, c.spec, c.task.NextStartTime, c.exec.ID)
		n.pool.release()
	}

	next := plan()
	f := repository.Finish{
		Claim: c.task.Claim(), ExecutionID: c.exec.ID, Status: status, Error: errText(runErr),
		Next: next.next, NextAttempt: 1, Done: next.done, Cron: c.task.Cron,
	}
	if status != repository.ExecSucceeded && status != repository.ExecSkipped && c.task.Attempt <= c.spec.opts.MaxRetries {
		// A retry is a pending fire any node may claim, so the claim is not kept.
		f.Next = n.dbNow().Add(backoff(max(c.task.Attempt, 1), c.spec.opts.RetryBackoff, maxRetryBackoff))
		f.NextAttempt, f.Done, f.Handoff = max(c.task.Attempt, 1)+1, false, true
	} else if f.Keep = n.keepFor(f.Next); f.Keep && !n.stillMine(c.task) {
		// The strategy gives the task to a peer now (the live set changed):
		// the finish itself hands it over, with a wake-up, so the new owner
		// claims it before its next fire and no extra release is written.
		f.Keep, f.Handoff = false, true
	}
	n.finish(c, f)
}

// stillMine reports whether the strategy gives t to this node on the
// current live view, and the node is not leaving.
func (n *node) stillMine(t repository.Task) bool {
	return !n.stopping.Load() && n.strat.Accept(n.strategyView(n.liveView()), t, n.self)
}

// finish writes f through the completer and requeues the task when the
// claim was kept.
func (n *node) finish(c *claimed, f repository.Finish) {
	// A kept claim is renewed at version+1 by this write: reconcile must not
	// compare the row with the held map between the write and the update of
	// the map below, or it would release a claim this node still holds.
	n.claimMu.RLock()
	defer n.claimMu.RUnlock()
	res := n.completer.finish(n.bg, f)
	n.counts.add(time.Now())
	switch {
	case errors.Is(res.Err, repository.ErrClaimLost):
		// Fenced, or a retry of a finish whose first reply was lost: then
		// the row may still name this node, which reconcile sorts out.
		n.dirty.Store(true)
		n.stats.fenced.Add(1)
		n.forget(c)
		n.log.Warn().Str("task", c.task.Name).Msg("easyjob: finish fenced: the claim was lost while running; result recorded, not applied")
	case res.Err != nil:
		n.dirty.Store(true)
		n.forget(c)
		n.log.Error().Err(res.Err).Str("task", c.task.Name).Msg("easyjob: finish not written")
	case res.Task.Status == repository.TaskDoing && res.Task.NodeID == n.self:
		next := &claimed{task: res.Task, spec: c.spec, index: -1, localAt: n.toLocal(res.Task.NextStartTime), epoch: n.epoch.Load()}
		n.mu.Lock()
		held := n.held[c.task.ID] == c
		// Checked again: the live view may have changed during the write.
		mine := held && n.stillMine(res.Task)
		switch {
		case mine:
			n.held[c.task.ID] = next
		case held:
			delete(n.held, c.task.ID)
		}
		n.mu.Unlock()
		if mine {
			n.queue.push(next)
		} else {
			n.releaseRows(n.bg, []repository.Task{res.Task}, "no longer this node's")
		}
	default:
		if f.Handoff && res.Task.Status == repository.TaskPending {
			n.stats.handedOff.Add(1)
		}
		n.forget(c)
	}
}

// keepFor decides whether the finish may keep the claim for the next fire:
// whenever that fire falls in the fetch window (execute then hands it off
// instead when the strategy gives the task to a peer).
func (n *node) keepFor(next time.Time) bool {
	return !n.suspect() && !next.IsZero() && next.Sub(n.dbNow()) <= n.cfg.FetchWindow
}

// call runs the job with its deadline and metadata; panics become failures.
func (n *node) call(ctx context.Context, spec *taskSpec, t repository.Task, scheduled time.Time, fence repository.Claim) (status repository.ExecStatus, err error) {
	if spec.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.opts.Timeout)
		defer cancel()
	}
	ctx = withInfo(ctx, Info{
		Task: spec.name, TaskID: int64(t.ID), ScheduledAt: scheduled, Attempt: max(t.Attempt, 1),
		NodeID: int64(n.self), Token: Token{TaskID: int64(fence.ID), Version: fence.Version},
	})
	start := time.Now()
	err = func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = panicError(r)
			}
		}()
		return spec.fn(ctx)
	}()
	switch {
	case err == nil:
		status = repository.ExecSucceeded
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		status = repository.ExecTimedOut
		err = fmt.Errorf("timed out after %v: %w", spec.opts.Timeout, err)
	default:
		status = repository.ExecFailed
	}
	if spec.opts.Timeout > 0 && time.Since(start) > spec.opts.Timeout+time.Second {
		n.log.Warn().Str("task", spec.name).Dur("ran", time.Since(start)).Dur("timeout", spec.opts.Timeout).
			Msg("easyjob: job ignored its context past the timeout and held a worker")
	}
	if err != nil {
		var pe *PanicError
		ev := n.log.Warn().Err(err).Str("task", spec.name).Int("attempt", max(t.Attempt, 1))
		if errors.As(err, &pe) {
			ev = ev.Bytes("stack", pe.Stack)
		}
		ev.Msg("easyjob: job failed")
	}
	return status, err
}

// scheduleFor returns the schedule of the row's cron: the registered one,
// or the row's own when an operator rescheduled the task.
func (n *node) scheduleFor(t repository.Task, spec *taskSpec) schedule {
	if t.Cron == spec.cron {
		return spec.sched
	}
	s, err := parseSchedule(t.Cron, spec.opts.Timezone)
	if err != nil {
		n.log.Error().Err(err).Str("task", t.Name).Msg("easyjob: stored cron is invalid; using the registered one")
		return spec.sched
	}
	return s
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
