package easyjob

import (
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// maxRetryBackoff caps the exponential retry backoff.
const maxRetryBackoff = 10 * time.Minute

// outcome is the finish of a root fire: the next fire as planned, a retry
// when the run failed and retries are left, and whether the claim is kept
// for the next fire or handed to a peer.
func (n *node) outcome(c *claim, execID int64, status repository.ExecStatus, runErr error, next firePlan) repository.Finish {
	f := repository.Finish{
		Claim: c.fence(), ExecutionID: execID, Status: status, Error: errText(runErr),
		Next: next.next, NextAttempt: 1, Done: next.done, Cron: c.task.Cron,
	}
	attempt := max(c.task.Attempt, 1)
	switch {
	case status != repository.ExecSucceeded && status != repository.ExecSkipped && c.task.Attempt <= c.spec.opts.MaxRetries:
		// A retry is a pending fire any node may claim, so the claim is not kept.
		f.Next = n.dbNow().Add(backoff(attempt, c.spec.opts.RetryBackoff, maxRetryBackoff))
		f.NextAttempt, f.Done, f.Handoff = attempt+1, false, true
	case !n.keepFor(f.Next):
	case c.task.Paused:
		// Claimed while paused (a triggered run): the finish parks the row,
		// so there is no next fire to keep, nor one to queue before the
		// write (a successor would start if the write were slow).
	case n.crowded.Load():
		// Every claim taken while a due task waits (crowded.go): released,
		// the task is claimed again in due order, after the overdue ones.
	case !n.stillMine(c.task):
		// The strategy gives the task to a peer now (the live set changed):
		// the finish itself hands it over, with a wake-up, so the new owner
		// claims it before its next fire and no extra release is written.
		f.Handoff = true
	default:
		f.Keep = true
	}
	return f
}

// keepFor reports whether a finish may keep the claim for a next fire at
// next: when that fire falls in the fetch window and the node is healthy.
func (n *node) keepFor(next time.Time) bool {
	return !n.suspect() && !next.IsZero() && next.Sub(n.dbNow()) <= n.cfg.FetchWindow
}

// stillMine reports whether the strategy gives t to this node on the
// current live view, and the node is not leaving.
func (n *node) stillMine(t repository.Task) bool {
	return !n.stopping.Load() && n.picker.keeps(t)
}

// finish writes f, the finish of claim c, and waits until c is settled
// by the result (settle); for chain children, whose parent's worker reads
// the written row.
func (n *node) finish(c *claim, f repository.Finish) repository.FinishResult {
	got := make(chan repository.FinishResult, 1)
	n.finishLater(c, func() repository.Finish { return f }, func(r repository.FinishResult) { got <- r })
	return <-got
}

// finishLater hands the finish of claim c to the completer and returns at
// once: build makes the finish when the completer builds it (after the
// burst the fire started in), then settle applies the result, then then
// (if not nil) receives it. A finish that keeps the claim queues the
// claim's next fire as it is built (its successor, successor.go), not
// once it is written. A successor's own finish waits for its
// predecessor's to settle. Until then the pool counts the finish as work
// in flight (shutdown waits for it).
func (n *node) finishLater(c *claim, build func() repository.Finish, then func(repository.FinishResult)) {
	n.later(&laterFinish{n: n, c: c, make: build, then: then})
}

// finishFired is finishLater for a root fire that ran (or skipped): its
// finish is the outcome o, built without a closure (execute, in a burst).
func (n *node) finishFired(c *claim, o firedOutcome) {
	n.later(&laterFinish{n: n, c: c, fired: o})
}

func (n *node) later(l *laterFinish) {
	// A claim kept by this finish is void if a silence began since its job
	// ended (the epoch moved): the node dropped its claims then, and must
	// not take this one up again even though the fenced write kept it.
	l.epoch = n.claims.currentEpoch()
	l.req.job = l
	n.pool.pending() // until l.done
	// A successor's finish waits for its predecessor's to settle (c is then
	// held or void).
	if p := l.c.pred.Load(); p != nil && p.afterSettle(l.submit) {
		return
	}
	l.submit()
}

// laterFinish is a finish handed to the completer (finishLater), with
// the completer's part of it: one allocation per fire.
type laterFinish struct {
	req   finishReq
	n     *node
	c     *claim
	make  func() repository.Finish // nil: the finish is fired's outcome
	fired firedOutcome
	then  func(repository.FinishResult)
	epoch int64
}

// firedOutcome is how a root fire ended, which its finish is built from.
type firedOutcome struct {
	execID    int64
	status    repository.ExecStatus
	err       error
	appendRun bool          // no start record: the finish appends the run
	ran       time.Duration // how long the job ran
}

func (l *laterFinish) submit() { l.n.completer.submit(&l.req, l.c.localAt) }

func (l *laterFinish) build() repository.Finish {
	var f repository.Finish
	if l.make != nil {
		f = l.make()
	} else {
		o := l.fired
		f = l.n.outcome(l.c, o.execID, o.status, o.err, l.n.plan(l.c))
		if o.appendRun {
			f.Run, f.Ran = l.c.runRecord(), o.ran
		}
	}
	f.Claim = l.c.fence() // void (fenced) when c was not confirmed
	l.n.speculate(l.c, f)
	return f
}

func (l *laterFinish) done(f repository.Finish, res repository.FinishResult) {
	defer l.n.pool.finished()
	l.n.settle(l.c, f, l.epoch, res)
	if l.then != nil {
		l.then(res)
	}
}

// settle applies the written finish f of claim c: a claim the write kept
// is held again for its next fire (its successor, when the row is the one
// predicted; else a claim of the written row, queued now); any other is
// forgotten, and a successor not confirmed is void. It runs under the
// claim gate, which the completer holds from before the statement until
// its results are settled: reconcile must not compare the row with the
// claim set between the write and the renewal below, or it would release
// a claim this node still holds.
func (n *node) settle(c *claim, f repository.Finish, epoch int64, res repository.FinishResult) {
	n.counts.add(time.Now())
	succ := c.successor()
	defer c.markSettled()
	switch {
	case errors.Is(res.Err, repository.ErrClaimLost):
		// Fenced, or a retry of a finish whose first reply was lost: then
		// the row may still name this node, which reconcile sorts out.
		n.dirty.Store(true)
		n.stats.fenced.Add(1)
		n.claims.drop(c)
		n.log.Warn().Str("task", c.task.Name).Msg("easyjob: finish fenced: the claim was lost while running; result recorded, not applied")
	case res.Err != nil:
		n.dirty.Store(true)
		n.claims.drop(c)
		n.log.Error().Err(res.Err).Str("task", c.task.Name).Msg("easyjob: finish not written")
	case res.Task.Status == repository.TaskDoing && res.Task.NodeID == n.id():
		next := succ
		if next == nil || !next.predicts(res.Task) || (!next.shot.Load() && next.epoch != epoch) {
			next = newClaim(res.Task, c.spec, n.toLocal(res.Task.NextStartTime), epoch)
		}
		// A live view that changed during the write does not undo the keep:
		// the claim is ours and fires once more here; the next finish hands
		// it over in its own statement. Releasing it now would cost one
		// statement per task just when nodes join (a release storm). A
		// successor that already fired is held whatever happened since
		// (stopping, a silence): its fire ran, so its finish must be written
		// like that of any running job, or the row would offer that fire
		// again.
		switch {
		case n.claims.renew(c, next, func() bool {
			return next.shot.Load() || (n.claims.currentEpoch() == epoch && !n.stopping.Load())
		}):
			if next != succ {
				n.queue.push(next)
			} else {
				succ = nil // confirmed
			}
		case n.stopping.Load():
			// Shutdown releases every row still claimed in one statement
			// once the jobs are done (releaseHeld).
		default:
			n.release(n.bg, "kept after the node dropped its claims", []repository.Claim{res.Task.Claim()})
		}
	default:
		if f.Handoff && res.Task.Status == repository.TaskPending {
			n.stats.handedOff.Add(1)
			n.watchHandover(res.Task, c.spec)
			n.observe(Event{Kind: EventHandover, Task: c.spec.name})
		}
		n.claims.drop(c)
	}
	if succ != nil {
		n.voidSuccessor(succ)
	}
	if n.hooks != nil {
		n.hooks.fireFinished.send(res)
	}
}
