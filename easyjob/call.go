package easyjob

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// call runs the job of spec for row t (claimed) and fire time scheduled,
// with its deadline and metadata; panics become failures.
func (n *node) call(ctx context.Context, spec *taskSpec, t *repository.Task, scheduled time.Time) (status repository.ExecStatus, took time.Duration, err error) {
	if spec.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.opts.Timeout)
		defer cancel()
	}
	fence := t.Claim()
	ctx = withInfo(ctx, Info{
		Task: spec.name, TaskID: int64(t.ID), ScheduledAt: scheduled, Attempt: max(t.Attempt, 1),
		NodeID: int64(n.id()), Token: Token{TaskID: int64(fence.ID), Version: fence.Version},
	})
	start := mono()
	err = func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = panicError(r)
			}
		}()
		return spec.fn(ctx)
	}()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// The deadline passed before the job returned: timed out, whatever
		// it returned (a job that ignores its context and returns nil late
		// did not succeed within its timeout).
		status = repository.ExecTimedOut
		if err == nil {
			err = fmt.Errorf("timed out after %v: the job returned after its deadline, ignoring its context", spec.opts.Timeout)
		} else {
			err = fmt.Errorf("timed out after %v: %w", spec.opts.Timeout, err)
		}
	case err == nil:
		status = repository.ExecSucceeded
	default:
		status = repository.ExecFailed
	}
	took = mono() - start
	if n.obs != nil {
		n.observe(Event{Kind: EventRunEnd, Task: spec.name, Cron: t.Cron, Scheduled: scheduled, Attempt: max(t.Attempt, 1),
			Status: status, Duration: took, Err: err, At: time.Now()})
	}
	if spec.opts.Timeout > 0 && took > spec.opts.Timeout+time.Second {
		n.log.Warn().Str("task", spec.name).Dur("ran", took).Dur("timeout", spec.opts.Timeout).
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
	return status, took, err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
