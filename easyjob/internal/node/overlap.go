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
