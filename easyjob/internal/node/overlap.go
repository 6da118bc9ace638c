package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// overlapCancel is the cause of a job's context cancelled by its task's
// overlap policy (cancel, terminate): the next fire came due while it ran.
type overlapCancel struct {
	next   time.Time
	policy repository.OverlapPolicy
}

func (e *overlapCancel) Error() string {
	return fmt.Sprintf("the fire of %s came due (overlap policy %s)", e.next.UTC().Format(time.RFC3339), e.policy)
}

// overlapOf returns the overlap cancel that ended ctx, if one did.
func overlapOf(ctx context.Context) *overlapCancel {
	if ctx.Err() == nil {
		return nil
	}
	var oc *overlapCancel
	if errors.As(context.Cause(ctx), &oc) {
		return oc
	}
	return nil
}

// overlapDeadline sets when claim c's run is cancelled under its task's
// overlap policy cancel or terminate: at its next fire (the boss calls it
// as it fires c; the worker gives the run's context that deadline). The
// node that runs the fire holds the row, so the policy needs no word from
// a peer: only this node can start the next fire, once this one's finish
// is written (schedule.Overlap then runs it at once, buffered).
func (n *Node) overlapDeadline(c *claim.Claim) {
	p := c.Spec.Opts.Overlap
	if (p != repository.OverlapCancel && p != repository.OverlapTerminate) || c.Backfill() {
		return
	}
	if next, ok := n.nextRunning(c); ok {
		c.CancelAt, c.Overlap = n.toLocal(next), &overlapCancel{next: next, policy: p}
	}
}

// nextRunning is the next fire of c's task that will run (jittered): the
// plan's next, past the ones its calendar excludes (a skipped fire does
// not cancel a run).
func (n *Node) nextRunning(c *claim.Claim) (time.Time, bool) {
	p := c.Plan()
	if p.Done || p.Next.IsZero() {
		return time.Time{}, false
	}
	next := p.Next
	for range 100 {
		if n.excludedAt(c.Spec.Opts.Calendar, next) == "" {
			return next.Add(schedule.JitterOf(c.Task.Name, next, c.Spec.Opts.Jitter)), true
		}
		var ok bool
		if next, ok = c.Sched.Next(next); !ok {
			return time.Time{}, false
		}
	}
	return time.Time{}, false
}

// errTerminated is a job left running past its overlap grace.
type errTerminated struct {
	cause *overlapCancel
	grace time.Duration
}

func (e errTerminated) Error() string {
	return fmt.Sprintf("terminated: %v, and the job ignored its cancelled context for %v; it was left to return on its own", e.cause, e.grace)
}

// terminated reports a job left running past its overlap grace.
func terminated(err error) bool {
	var t errTerminated
	return errors.As(err, &t)
}

// callTerminable runs job under the overlap policy terminate: once an
// overlap cancels ctx, it waits at most the task's grace for the job,
// then gives the worker back and leaves the job to return on its own (a
// goroutine cannot be stopped), tracked by the pool so that a shutdown
// waits for it as for any job. Other cancels (timeout, shutdown) wait for
// the job as usual.
func (n *Node) callTerminable(ctx context.Context, task string, grace time.Duration, job func() error) error {
	if grace <= 0 {
		grace = repository.DefaultOverlapGrace
	}
	done := make(chan error, 1)
	n.pool.Track(func() {
		began := mono()
		err := job()
		done <- err
		if ctx.Err() != nil && mono()-began > grace {
			n.log.Debug().Str("task", task).Stringer("ran", (mono() - began).Round(time.Millisecond)).
				Msg("easyjob: a job past its cancel returned")
		}
	})
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	oc := overlapOf(ctx)
	if oc == nil {
		return <-done
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		n.log.Warn().Str("task", task).Stringer("grace", grace).
			Msg("easyjob: job ignored its context after an overlap cancel; terminated (left to return on its own)")
		return errTerminated{cause: oc, grace: grace}
	}
}
