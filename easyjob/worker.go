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

// execute runs one due claim on the calling worker goroutine: record the
// execution, call the job, run its children, then finish with one fenced
// write that may keep the claim for the next fire.
func (n *node) execute(c *claimed) {
	ctx, cancel := context.WithCancel(n.runBase)
	defer cancel()
	n.mu.Lock()
	if n.held[c.task.ID] != c {
		n.mu.Unlock()
		return
	}
	c.state, c.cancel = stateRunning, cancel
	n.mu.Unlock()
	if n.stopping.Load() || n.suspect() {
		n.release(n.bg, []*claimed{c}, "node stopping or silent")
		return
	}

	sched := n.scheduleFor(c.task, c.spec)
	plan := planFire(sched, c.spec.opts, c.task.NextStartTime, n.dbNow())
	exec, err := n.store.StartExecution(ctx, c.task.Claim(), repository.Execution{
		ScheduledAt: c.task.NextStartTime, Attempt: max(c.task.Attempt, 1), Misfire: plan.misfire,
	})
	if err != nil {
		n.forget(c)
		if errors.Is(err, repository.ErrClaimLost) {
			n.stats.fenced.Add(1)
			n.log.Warn().Str("task", c.task.Name).Msg("easyjob: claim lost before start; not running")
			return
		}
		// The database is away: reconcile releases the row once it is back.
		n.log.Warn().Err(err).Str("task", c.task.Name).Msg("easyjob: could not record start; not running")
		return
	}

	status, runErr := repository.ExecSkipped, error(nil)
	if plan.run {
		n.stats.fired.Add(1)
		status, runErr = n.call(ctx, c.spec, c.task, exec, c.task.Claim())
		if status == repository.ExecSucceeded {
			n.runChildren(ctx, c.spec, c.task.NextStartTime, exec.ID)
		}
	}

	f := repository.Finish{
		Claim: c.task.Claim(), ExecutionID: exec.ID, Status: status, Error: errText(runErr),
		Next: plan.next, NextAttempt: 1, Done: plan.done, Cron: c.task.Cron,
	}
	if status != repository.ExecSucceeded && status != repository.ExecSkipped && c.task.Attempt <= c.spec.opts.MaxRetries {
		// A retry is a pending fire any node may claim, so the claim is not kept.
		f.Next = n.dbNow().Add(backoff(max(c.task.Attempt, 1), c.spec.opts.RetryBackoff, maxRetryBackoff))
		f.NextAttempt, f.Done = max(c.task.Attempt, 1)+1, false
	} else {
		f.Keep = n.keepFor(c.task, f.Next)
	}
	n.finish(c, f)
}

// finish writes f through the completer and requeues the task when the
// claim was kept.
func (n *node) finish(c *claimed, f repository.Finish) {
	res := n.completer.finish(n.bg, f)
	n.counts.Add(1)
	switch {
	case errors.Is(res.Err, repository.ErrClaimLost):
		n.stats.fenced.Add(1)
		n.forget(c)
		n.log.Warn().Str("task", c.task.Name).Msg("easyjob: finish fenced: the claim was lost while running; result recorded, not applied")
	case res.Err != nil:
		n.forget(c)
		n.log.Error().Err(res.Err).Str("task", c.task.Name).Msg("easyjob: finish not written")
	case res.Task.Status == repository.TaskDoing && res.Task.NodeID == n.self && !n.stopping.Load():
		next := &claimed{task: res.Task, spec: c.spec, index: -1, localAt: n.toLocal(res.Task.NextStartTime)}
		n.mu.Lock()
		kept := n.held[c.task.ID] == c
		if kept {
			n.held[c.task.ID] = next
		}
		n.mu.Unlock()
		if kept {
			n.queue.push(next)
		} else {
			n.release(n.bg, []*claimed{next}, "claim dropped while finishing")
		}
	case res.Task.Status == repository.TaskDoing && res.Task.NodeID == n.self:
		n.forget(c)
		n.releaseRows(n.bg, []repository.Task{res.Task}, "node stopping")
	default:
		n.forget(c)
	}
}

// keepFor decides whether the finish keeps the claim for the next fire:
// only when it falls in the fetch window and the strategy still gives the
// task to this node on the current live set.
func (n *node) keepFor(t repository.Task, next time.Time) bool {
	if n.stopping.Load() || n.suspect() || next.IsZero() {
		return false
	}
	if next.Sub(n.dbNow()) > n.cfg.FetchWindow {
		return false
	}
	return n.strat.Accept(n.liveView(), t, n.self)
}

// call runs the job with its deadline and metadata; panics become failures.
func (n *node) call(ctx context.Context, spec *taskSpec, t repository.Task, exec repository.Execution, fence repository.Claim) (status repository.ExecStatus, err error) {
	if spec.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.opts.Timeout)
		defer cancel()
	}
	ctx = withInfo(ctx, Info{
		Task: spec.name, TaskID: int64(t.ID), ExecutionID: exec.ID, ScheduledAt: exec.ScheduledAt,
		Attempt: exec.Attempt, NodeID: int64(n.self), Token: Token{TaskID: int64(fence.ID), Version: fence.Version},
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
		ev := n.log.Warn().Err(err).Str("task", spec.name).Int("attempt", exec.Attempt)
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
