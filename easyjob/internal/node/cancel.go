package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
)

// cancelGrace is how long a job may go on after an operator cancelled
// it before its node reports that it ignores its context.
const cancelGrace = 10 * time.Second

// runCancelled is the cause of a job's context cancelled by an operator
// (Client.Cancel): its run is recorded cancelled, naming who asked.
type runCancelled struct {
	by string
	at time.Time
}

func (e *runCancelled) Error() string {
	by := e.by
	if by == "" {
		by = "an operator"
	}
	return fmt.Sprintf("cancelled by %s at %s", by, e.at.UTC().Format(time.RFC3339))
}

// cancelOf returns the operator's cancel that ended ctx, if one did.
func cancelOf(ctx context.Context) *runCancelled {
	if ctx.Err() == nil {
		return nil
	}
	var rc *runCancelled
	if errors.As(context.Cause(ctx), &rc) {
		return rc
	}
	return nil
}

// cancelled is a run an operator cancelled whose job has not returned
// yet: its node reports it once cancelGrace has passed.
type cancelled struct {
	c        *claim.Claim
	by       *runCancelled
	deadline time.Time // local
}

// cancelReader is the node's service that reads cancel requests
// (repository.CancelReader) and cancels the runs they name. It reads only
// while jobs run: an idle node pays no query for it. Owned by its loop.
type cancelReader struct {
	since    time.Time   // the store's clock: requests after it are new
	watching []cancelled // cancelled runs not returned yet
}

// readCancels is one pass of the cancel loop: cancel the runs of the
// tasks named by requests made since the last pass, and report the jobs
// that ignore a cancel past cancelGrace.
func (n *Node) readCancels(ctx context.Context) error {
	r := &n.cancels
	if r.since.IsZero() {
		// Requests older than the node are not for its runs.
		now, err := n.store.Now(ctx)
		if err != nil {
			return err
		}
		r.since = now
		return nil
	}
	n.reportIgnoredCancels()
	if n.pool.Busy() == 0 {
		return nil
	}
	reqs, err := n.store.CancelsSince(ctx, n.cfg.Group, r.since)
	if err != nil {
		return err
	}
	for _, q := range reqs {
		r.since = q.At
		cause := &runCancelled{by: q.By, at: q.At}
		// Runs of fires up to the request's time: a fire due after it
		// is not the run the operator saw.
		stopped := n.pool.StopIf(func(c *claim.Claim) bool {
			return matches(c, q.Task) && !c.Task.NextStartTime.After(q.At)
		}, cause)
		for _, c := range stopped {
			n.log.Info().Str("task", c.Spec.Name).Time("scheduled", c.Task.NextStartTime).Str("by", q.By).
				Msg("easyjob: run cancelled by an operator")
			r.watching = append(r.watching, cancelled{c: c, by: cause, deadline: time.Now().Add(cancelGrace)})
		}
	}
	return nil
}

// reportIgnoredCancels warns, once, of each cancelled job still running
// past cancelGrace: it ignores its context. Its run is recorded when it
// returns, cancelled if it returns an error.
func (n *Node) reportIgnoredCancels() {
	r := &n.cancels
	keep := r.watching[:0]
	for _, w := range r.watching {
		switch {
		case !n.pool.Holds(w.c):
		case time.Now().Before(w.deadline):
			keep = append(keep, w)
		default:
			n.log.Warn().Str("task", w.c.Spec.Name).Time("scheduled", w.c.Task.NextStartTime).Stringer("grace", cancelGrace).
				Msg("easyjob: a cancelled job ignores its context and still runs")
		}
	}
	clear(r.watching[len(keep):])
	r.watching = keep
}

// matches reports whether a cancel of task name is for claim c's run:
// its own task, or a step of its chain (the chain's run is cancelled).
func matches(c *claim.Claim, name string) bool {
	if c.Task.Name == name {
		return true
	}
	return c.Spec != nil && c.Spec.HasStep(name)
}
