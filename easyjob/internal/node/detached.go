package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// A fire of an OverlapAllowAll task runs detached: its job goes on
// apart from its claim and its worker slot (dispatch.Pool.Detach), and
// the claim finishes at once with repository.ExecGoesOn, which moves the
// row on to the next fire (kept, as usual) without a run status. The
// next fire then starts at its time whatever the runs before it do, up
// to the task's OverlapLimit of runs at once on this node; a fire due at
// the limit is skipped and recorded so. Each run is recorded when its job
// returns (RunStore.EndRun), on whichever node holds the task by then.
//
// A launch whose finish finds the claim lost (a peer took the task: this
// node looked dead) cancels its run: the fire may run on the peer.

// errLaunchFenced is the cause of a detached run cancelled because its
// launch lost the claim.
var errLaunchFenced = errors.New("easyjob: the claim of this fire was lost as it started (a peer took the task); cancelled")

// endRunAttempts bounds the writes of a detached run's end when the
// database does not take it; the run's row then stays running until a
// peer's recovery of the task marks it abandoned.
const endRunAttempts = 6

// executeDetached is run's work for a fire of an OverlapAllowAll task.
func (n *Node) executeDetached(ctx context.Context, c *claim.Claim) {
	limit := c.Spec.Opts.OverlapLimit
	if limit <= 0 {
		limit = repository.DefaultOverlapLimit
	}
	if c.Skips() || n.pool.DetachedOf(c.Task.ID) >= limit {
		o := firedOutcome{status: repository.ExecSkipped}
		if c.Excluded != "" {
			o.err = skipReason(c.Excluded)
		} else if !c.Skips() {
			o.err = skipReason(fmt.Sprintf("%d runs of the task still running: its overlap limit (allow_all)", limit))
		}
		n.finishLaunch(c, o, nil)
		return
	}
	n.stats.fired.Add(1)
	t, scheduled, found := c.Task, c.Task.NextStartTime, c.FoundAt.Add(-c.Jitter)
	run := c.RunRecord()
	began := n.dbNow()
	cancel := n.pool.Detach(c, func(dctx context.Context) {
		runCtx, endRun := n.fired(dctx, c.Spec, &t, scheduled, found, c.Misfire, c.Kind)
		status, began, took, log, err := n.call(runCtx, c.Spec, &t, scheduled, run.Batch, nil, nil)
		endRun(observe.RunResult{Status: status, Err: err})
		n.endDetached(repository.RunEnd{
			Task: t.ID, Node: n.id(), Run: *run, Started: began, Ran: took, Status: status, Error: errText(err),
			PauseAfter: c.Spec.Opts.PauseAfter, Log: log,
		})
	})
	n.finishLaunch(c, firedOutcome{status: repository.ExecGoesOn, began: began}, cancel)
}

// finishLaunch writes the finish of detached fire c (or of its skip): the
// start record, then the claim's finish; a lost claim cancels the run.
func (n *Node) finishLaunch(c *claim.Claim, o firedOutcome, cancel context.CancelCauseFunc) {
	exec, appendRun, err := c.Recorded(n.bg.Done(), n.pool)
	if err != nil {
		if cancel != nil && errors.Is(err, repository.ErrClaimLost) {
			cancel(errLaunchFenced)
		}
		n.drop(c, nil)
		return
	}
	o.execID, o.appendRun = exec.ID, appendRun
	l := &laterFinish{n: n, c: c, fired: o}
	if cancel != nil {
		l.then = func(res repository.FinishResult) {
			if errors.Is(res.Err, repository.ErrClaimLost) {
				cancel(errLaunchFenced)
			}
		}
	}
	n.later(l)
}

// endDetached records the end of a detached run, retrying with backoff
// while the database does not answer, at most endRunAttempts times.
func (n *Node) endDetached(e repository.RunEnd) {
	for attempt := 1; ; attempt++ {
		err := n.store.EndRun(n.bg, e)
		if err == nil {
			return
		}
		if attempt == endRunAttempts || n.bg.Err() != nil {
			n.log.Error().Err(err).Int64("task", int64(e.Task)).Time("scheduled", e.Run.ScheduledAt).
				Msg("easyjob: the end of a run was not recorded (allow_all); its row stays running until the task is recovered")
			return
		}
		if !schedule.Sleep(n.bg, schedule.Backoff(attempt, 200*time.Millisecond, 5*time.Second)) {
			return
		}
	}
}
