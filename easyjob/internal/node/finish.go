package node

import (
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// maxRetryBackoff caps the exponential retry backoff.
const maxRetryBackoff = 10 * time.Minute

// outcome is the finish of a root fire: the next fire as planned, a retry
// when the run failed and retries are left, and whether the claim is kept
// for the next fire or handed to a peer.
func (n *Node) outcome(c *claim.Claim, execID int64, status repository.ExecStatus, runErr error, next schedule.Plan) repository.Finish {
	f := repository.Finish{
		Claim: c.Fence(), ExecutionID: execID, Status: status, Error: errText(runErr),
		NextAttempt: 1, Cron: c.Task.Cron, Revision: c.Task.Revision,
	}
	attempt := max(c.Task.Attempt, 1)
	buffered := false
	if c.Backfill() {
		n.backfillNext(c, &f)
	} else if c.Spec.Opts.Overlap != repository.OverlapWait {
		var dropped int
		next, buffered, dropped = schedule.Overlap(*c.Sched, c.Spec.Opts, next, c.FoundAt, n.dbNow(), c.Task.FireKind == repository.RunBuffered)
		if dropped > 0 {
			n.log.Info().Str("task", c.Spec.Name).Int("dropped", dropped).Stringer("overlap", c.Spec.Opts.Overlap).
				Msg("easyjob: fires that came due while the run ran were dropped by the task's overlap policy")
		}
	}
	if !c.Backfill() {
		f.Next, f.Done = next.Next, next.Done
		f.CountFire = c.Task.ParentID == 0 && attempt == 1 && status != repository.ExecSkipped
	}
	if c.Spec.Opts.Daemon {
		n.planDaemon(c, &f, status) // daemon.go
	}
	due := f.DueAt()
	switch {
	case c.StartFailed():
		// The start record found the claim lost: the finish records the
		// run, fenced, and plans nothing (a successor would be void).
	case pausesTask(c, status):
		// This failure makes the task's failures in a row reach its
		// PauseAfter: the finish parks it paused and audits the pause in
		// the same write, so there is no retry and no next fire to keep.
		f.Pause = true
	case status != repository.ExecSucceeded && status != repository.ExecSkipped && status != repository.ExecGoesOn &&
		c.Task.Attempt <= c.Spec.Opts.MaxRetries && !c.Backfill():
		// A retry is a pending fire any node may claim, so the claim is not kept.
		f.Next = n.dbNow().Add(schedule.Backoff(attempt, c.Spec.Opts.RetryBackoff, maxRetryBackoff))
		f.NextAttempt, f.Done, f.Handoff = attempt+1, false, true
	case fired(c, f) >= c.Spec.Opts.MaxFires && c.Spec.Opts.MaxFires > 0 && !c.Backfill():
		// The task ran its MaxFires fires: it finishes.
		f.Done = true
	case f.Done || !n.keepFor(due):
		// No next fire (the cron ends: a one-off ran) or none soon: nothing
		// to keep, and no successor to queue.
	case c.Task.Paused:
		// Claimed while paused (a triggered run): the finish parks the row,
		// so there is no next fire to keep, nor one to queue before the
		// write (a successor would start if the write were slow).
	case n.crowded.Load():
		// Every claim taken while a due task waits (crowded.go): released,
		// the task is claimed again in due order, after the overdue ones.
	case !n.stillMine(c.Task):
		// The strategy gives the task to a peer now (the live set changed):
		// the finish itself hands it over, with a wake-up, so the new owner
		// claims it before its next fire and no extra release is written.
		f.Handoff = true
	default:
		f.Keep = true
	}
	if buffered && f.NextAttempt == 1 && !f.Done && !f.Pause {
		f.NextKind = repository.RunBuffered // runs at once, outside the misfire policy
	}
	return f
}

// fired is how many fires the task has run once finish f is written
// (repository.Task.Fires).
func fired(c *claim.Claim, f repository.Finish) int64 {
	if f.CountFire {
		return c.Task.Fires + 1
	}
	return c.Task.Fires
}

// backfillNext makes f the finish of backfill fire c: the row's own
// fire stands, and its backfill moves on to the next fire of its range,
// or ends (a failed backfill fire is not retried: the range goes on).
func (n *Node) backfillNext(c *claim.Claim, f *repository.Finish) {
	next, kind, attempt := c.Row()
	f.Next, f.NextKind, f.NextAttempt = next, kind, max(attempt, 1)
	f.Backfilled = true
	if b, ok := c.Sched.Next(c.Task.NextStartTime); ok && !b.After(c.Task.BackfillTo) {
		f.BackfillNext = b
		return
	}
	if kind != "" || f.NextAttempt > 1 {
		return // a manual fire, a retry, a buffered fire: due as it stands
	}
	// The backfill ends: cron fires that came due while it ran overlapped
	// it, and the task's overlap policy decides how they run.
	p, buffered, _ := schedule.Overlap(*c.Sched, c.Spec.Opts, schedule.Plan{Run: true, Next: next}, c.FoundAt, n.dbNow(), false)
	f.Next = p.Next
	if p.Done {
		f.Next = next // no fire after the skipped ones: the row's stands, for its finish to end the task
	}
	if buffered {
		f.NextKind = repository.RunBuffered
	}
}

// pausesTask reports whether a run of c ending in status makes the
// task's failed runs in a row reach its PauseAfter option (the store's
// finish pauses it then).
func pausesTask(c *claim.Claim, status repository.ExecStatus) bool {
	limit := c.Spec.Opts.PauseAfter
	return limit > 0 && (status == repository.ExecFailed || status == repository.ExecTimedOut) && c.Task.Failures+1 >= limit
}

// keepFor reports whether a finish may keep the claim for a next fire at
// next: when that fire falls in the fetch window and the node is healthy.
func (n *Node) keepFor(next time.Time) bool {
	return !n.suspect() && !next.IsZero() && next.Sub(n.dbNow()) <= n.cfg.FetchWindow
}

// stillMine reports whether the strategy gives t to this node on the
// current live view, and the node is not leaving.
func (n *Node) stillMine(t repository.Task) bool {
	return !n.stopping.Load() && n.picker.keeps(t)
}

// finish writes f, the finish of claim c, and waits until c is settled
// by the result (settle); for chain children, whose parent's worker reads
// the written row.
func (n *Node) finish(c *claim.Claim, f repository.Finish) repository.FinishResult {
	got := make(chan repository.FinishResult, 1)
	n.finishLater(c, func() repository.Finish { return f }, func(r repository.FinishResult) { got <- r })
	return <-got
}

// finishLater hands the finish of claim c to the completer and returns at
// once: build makes the finish when the completer builds it (after the
// burst the fire started in), then settle applies the result, then then
// (if not nil) receives it. A finish that keeps the claim queues the
// claim's next fire as it is built (its successor, internal/claim: Claim.Successor), not
// once it is written. A successor's own finish waits for its
// predecessor's to settle. Until then the pool counts the finish as work
// in flight (shutdown waits for it).
func (n *Node) finishLater(c *claim.Claim, build func() repository.Finish, then func(repository.FinishResult)) {
	n.later(&laterFinish{n: n, c: c, make: build, then: then})
}

// finishFired is finishLater for a root fire that ran (or skipped): its
// finish is the outcome o, built without a closure (execute, in a burst).
func (n *Node) finishFired(c *claim.Claim, o firedOutcome) {
	n.later(&laterFinish{n: n, c: c, fired: o})
}

func (n *Node) later(l *laterFinish) {
	if !l.c.To(claim.Finishing) {
		// A bug, not a race: only a fired claim's worker finishes it.
		n.log.Error().Stringer("claim", l.c).Msg("easyjob: finish of a claim that is not running")
	}
	// A claim kept by this finish is void if a silence began since its job
	// ended (the epoch moved): the node dropped its claims then, and must
	// not take this one up again even though the fenced write kept it.
	l.epoch = n.claims.Epoch()
	l.req.job, l.req.tx = l, l.fired.tx
	n.pool.Pending() // until l.done
	// A successor's finish waits for its predecessor's to settle (c is then
	// held or void).
	if p := l.c.Pred(); p != nil && p.AfterSettle(l.submit) {
		return
	}
	l.submit()
}

// laterFinish is a finish handed to the completer (finishLater), with
// the completer's part of it: one allocation per fire.
type laterFinish struct {
	req   finishReq
	n     *Node
	c     *claim.Claim
	make  func() repository.Finish // nil: the finish is fired's outcome
	fired firedOutcome
	then  func(repository.FinishResult)
	epoch int64
}

func (l *laterFinish) submit() { l.n.completer.submit(&l.req, l.c.LocalAt) }

func (l *laterFinish) build() repository.Finish {
	var f repository.Finish
	if l.make != nil {
		f = l.make()
	} else {
		o := l.fired
		f = l.n.outcome(l.c, o.execID, o.status, o.err, l.c.Plan())
		f.Started, f.Ran, f.Log = o.began, o.ran, o.log
		f.Result = resultText(o.result, o.status)
		if o.appendRun {
			f.Run = l.c.RunRecord()
		}
		if o.resume {
			// The fire stays due, for any node: its next run resumes the
			// chain's steps left (executeChain).
			next, kind, attempt := l.c.Row() // a backfill fire stays pending in its own column
			f.Next, f.NextAttempt, f.NextKind, f.Done, f.Keep, f.Handoff = next, max(attempt, 1), kind, false, false, true
			f.Backfilled, f.BackfillNext, f.CountFire = false, time.Time{}, false
		}
	}
	f.Claim = l.c.Fence() // void (fenced) when c was not confirmed
	l.n.speculate(l.c, f)
	return f
}

func (l *laterFinish) done(f repository.Finish, res repository.FinishResult) {
	defer l.n.pool.Finished()
	l.n.settle(l.c, f, l.epoch, res)
	if l.then != nil {
		l.then(res)
	}
}

// settle applies the result res of claim c's written finish f: the claim
// set settles c (claim.Set.Settle: where it ends, which claim holds the
// row now, which successor is void) and the node does what that leaves to
// it. It runs under the claim gate, which the completer holds from before
// the statement until its results are settled.
func (n *Node) settle(c *claim.Claim, f repository.Finish, epoch int64, res repository.FinishResult) {
	n.counts.add(time.Now())
	st := n.claims.Settle(c, res, claim.Keep{Node: n.id(), Epoch: epoch, ToLocal: n.toLocal, Stopping: n.stopping.Load})
	switch st.End {
	case claim.Fenced:
		n.dirty.Store(true)
		n.stats.fenced.Add(1)
		n.log.Warn().Str("task", c.Task.Name).Msg("easyjob: finish fenced: the claim was lost while running; result recorded, not applied")
	case claim.Dropped:
		n.dirty.Store(true)
		n.log.Error().Err(res.Err).Str("task", c.Task.Name).Msg("easyjob: finish not written")
	case claim.Kept:
		if st.Queue != nil {
			n.queue.Push(st.Queue)
		}
	case claim.Released:
		switch {
		case st.Unheld && n.stopping.Load():
			// Shutdown releases every row still claimed in one statement
			// once the jobs are done (releaseHeld).
		case st.Unheld:
			n.release(n.bg, "kept after the node dropped its claims", []repository.Claim{res.Task.Claim()})
		case f.Handoff && res.Task.Status == repository.TaskPending:
			n.stats.handedOff.Add(1)
			n.watchHandover(res.Task, c.Spec)
			n.observe(observe.Event{Kind: observe.EventHandover, Task: c.Spec.Name})
		case f.Keep && res.Task.Status == repository.TaskPending:
			// The keep was refused: an operator acted during the run (a
			// trigger, an edit, a reschedule), so the row's next fire may be
			// due now. The loader looks at once rather than at its next poll,
			// which an idle node spaces out to the fetch window.
			n.poke()
		}
	}
	if x := st.Cancelled; x != nil {
		n.stats.voided.Add(1)
		n.log.Warn().Str("task", x.Task.Name).Time("scheduled", x.Task.NextStartTime).
			Msg("easyjob: a next fire started before its claim was confirmed, and the finish before it did not keep the claim as planned (an operator action during the run, or the claim lost); its job is cancelled and its run recorded as fenced")
	}
	if res.Err == nil && f.Status != "" {
		n.stepsAfter(c.Spec) // the DAG steps after it may be due now (dag.go)
	}
	if n.alerts != nil && res.Err == nil && f.Status != "" && f.Status != repository.ExecSkipped {
		n.alerts.Finished(res.Task, c.Task.NextStartTime)
	}
	if n.hooks != nil {
		n.hooks.FireFinished.send(res)
	}
}

// speculate queues the successor of c, whose finish f keeps the claim,
// for its next fire (internal/claim: Claim.Successor): the next fire does
// not wait for the write. None is queued for a claim from before a
// silence: it would fire before any write confirmed the row is still
// this node's.
func (n *Node) speculate(c *claim.Claim, f repository.Finish) {
	if !f.Keep {
		return // nothing to queue: no clock conversion either
	}
	// A backfill's next fire is due at once: the successor runs it.
	if next := c.Successor(f, n.toLocal(f.DueAt()), n.claims.Epoch()); next != nil {
		n.queue.Push(next)
	}
}

// drop forgets fired claim c, whose run could not be recorded (the claim
// lost, or the database away), and rolls back tx, the run's transaction
// (nil: none). Nothing is written: reconcile releases the row if it is
// still this node's.
func (n *Node) drop(c *claim.Claim, tx repository.FinishTx) {
	if tx != nil {
		_ = tx.Rollback() // a rollback that fails has nothing left to undo: the connection is gone, and the transaction with it
	}
	n.claims.Drop(c)
}
