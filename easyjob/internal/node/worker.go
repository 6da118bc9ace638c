package node

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/runlog"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// run is the pool's work for one fired claim: the last check before user
// code (mayStart), then the run its task's shape calls for. A plain task
// runs its job (execute); a task with children runs its chain
// (executeChain, chain.go).
func (n *Node) run(ctx context.Context, c *claim.Claim) {
	if !n.mayStart(ctx, c) {
		n.giveUp(c, "silence since the claim")
		return
	}
	switch {
	case len(c.Spec.Children) > 0:
		n.executeChain(ctx, c)
	case c.Spec.Opts.Overlap == repository.OverlapAllowAll && !c.Backfill():
		n.executeDetached(ctx, c) // detached.go
	default:
		n.execute(ctx, c)
	}
}

// execute runs one fired claim that may start (run) on its own
// goroutine, top to bottom: call the job, free the worker slot, then hand
// over the finish, one fenced write that may keep the claim for the next
// fire, without waiting for it.
//
// The worker frees the slot when execute returns, and then runs the next
// waiting fire itself. execute frees it earlier only where it would hold
// it while waiting: on a write (a start record).
func (n *Node) execute(ctx context.Context, c *claim.Claim) {
	o, _, endRun := n.runFire(ctx, c, c.Skips(), false)
	exec, appendRun, err := c.Recorded(n.bg.Done(), n.pool) // the slot is for running jobs, not for waiting on writes
	endRun(observe.RunResult{Status: o.status, Err: o.err})
	if err != nil {
		if !errors.Is(err, repository.ErrClaimLost) || o.status == repository.ExecSkipped || o.tx != nil {
			// Not recorded (the database away, or a run that did not
			// begin, or one whose transaction rolls back): nothing to
			// finish; reconcile releases the row if it is still ours.
			n.drop(c, o.tx)
			return
		}
		// The job began under a claim a peer has taken since: the history
		// keeps the run, as fenced, appended by the finish below, which
		// the lost claim's fence refuses (outcome keeps nothing).
		appendRun = true
	}
	// The outcome (next fire, keep or hand over) is worked out when the
	// completer builds the finish, after the burst this fire started in;
	// a kept claim's next fire is queued then (internal/claim: Successor).
	// The run's result goes with it (the steps it makes due read it).
	o.resume = interruptedAgain(c, o)
	o.execID, o.appendRun = exec.ID, appendRun
	n.finishFired(c, o)
}

// interruptedAgain reports whether the fire of run o, cut short by its
// node's silence (errSilenced), stays due to run again: unless the task
// skips interrupted fires (SkipInterrupted). Its finish then records the
// run fenced (its node fenced itself) and hands the fire over, as a
// peer's recovery would.
func interruptedAgain(c *claim.Claim, o firedOutcome) bool {
	return o.status == repository.ExecFenced && c.Spec.Opts.Recover != repository.RecoverSkip
}

// resultFor is the holder of a run's result when a DAG step follows task
// s (nil otherwise: SetResult then keeps nothing, and costs nothing).
func resultFor(s *spec.Spec) *[]byte {
	if len(s.Steps) == 0 {
		return nil
	}
	return new([]byte)
}

// mayStart is the last check before user code. A node that knows it
// cannot reach the database starts nothing: the fire waits for the
// database, or is left to the group (cutoff.go). A claim from before a
// silence, or a node that may be dead to its peers, must not run (the
// start row is written beside the job, so this check is the fence that
// counts).
func (n *Node) mayStart(ctx context.Context, c *claim.Claim) bool {
	return n.awaitDatabase(ctx) && c.Epoch == n.claims.Epoch() && !n.suspect()
}

// skipReason says why a fire did not run, as its history row records it.
type skipReason string

func (r skipReason) Error() string { return string(r) }

// firedOutcome is how a root fire ended, which its finish is built from.
type firedOutcome struct {
	execID    int64
	status    repository.ExecStatus
	err       error
	appendRun bool                // no start record: the finish appends the run
	began     time.Time           // when the job began (database clock); zero if it did not run
	ran       time.Duration       // how long the job ran
	resume    bool                // a chain cut short: the fire stays due, its next run resumes it
	log       string              // the job's log (runlogs.go)
	result    *[]byte             // the job's result (SetResult) when a DAG step follows it, else nil; written by the finish
	tx        repository.FinishTx // the job's transaction (InTx), committed by its finish
}

// runFire runs c's job unless skip (its misfire policy skips the fire, or
// its start record already failed: Claim.Skips); done (a chain's root
// that completed before its node died) counts it succeeded without
// running it again. It returns the outcome so far, the job's context (its
// children's parent) and the end of its observed run. The next fire is
// computed after the job (finish): an on-time fire always runs, and the
// cron arithmetic should not delay the jobs queued behind it.
func (n *Node) runFire(ctx context.Context, c *claim.Claim, skip, done bool) (firedOutcome, context.Context, func(observe.RunResult)) {
	o := firedOutcome{status: repository.ExecSkipped}
	if skip {
		if c.Excluded != "" {
			o.err = skipReason(c.Excluded) // recorded with the skipped run
		}
		return o, ctx, endNothing
	}
	n.stats.fired.Add(1)
	runCtx, endRun := n.fired(ctx, c.Spec, &c.Task, c.Task.NextStartTime, c.FoundAt.Add(-c.Jitter), c.Misfire, c.Kind) // lag from the jittered time
	if !c.CancelAt.IsZero() {
		// Its overlap policy cancels the run at the next fire (the
		// deadline's cause says so); the cancel ends with the fire.
		var cancel context.CancelFunc
		runCtx, cancel = context.WithDeadlineCause(runCtx, c.CancelAt, c.Overlap)
		end := endRun
		endRun = func(r observe.RunResult) { cancel(); end(r) }
	}
	switch {
	case done:
		o.status = repository.ExecSucceeded
	case c.Spec.InTx:
		o = n.callInTx(runCtx, c)
	default:
		o.result = resultFor(c.Spec)
		o.status, o.began, o.ran, o.log, o.err = n.call(runCtx, c.Spec, &c.Task, c.Task.NextStartTime, c.Batch(), nil, o.result)
	}
	return o, runCtx, endRun
}

// callInTx runs the job of c (an InTx task) in a transaction of its own,
// opened on the node's context: the job's context ends with its run, the
// transaction must outlive it until the finish commits it. A job that did
// not succeed has its transaction rolled back at once; a succeeded one
// hands it to its finish (completer), which commits the job's writes and
// the fenced finish together, or neither.
func (n *Node) callInTx(ctx context.Context, c *claim.Claim) firedOutcome {
	var o firedOutcome
	ftx, err := n.cfg.Tx.BeginFinish(n.bg)
	if err != nil {
		o.status, o.began = repository.ExecFailed, n.dbNow()
		o.err = fmt.Errorf("easyjob: the run's transaction did not begin, the job did not run: %w", err)
		n.log.Warn().Err(o.err).Str("task", c.Spec.Name).Msg("easyjob: job failed")
		return o
	}
	o.status, o.began, o.ran, o.log, o.err = n.call(ctx, c.Spec, &c.Task, c.Task.NextStartTime, c.Batch(), ftx.Tx(), nil)
	if o.status != repository.ExecSucceeded {
		_ = ftx.Rollback() // a rollback that fails has nothing left to undo: the connection is gone, and the transaction with it
		return o
	}
	o.tx = ftx
	return o
}

// call runs the job of spec for row t (claimed) and fire time scheduled
// (of batch, Execution.Batch), with its deadline, metadata and logger;
// panics become failures. It returns when the job began (the database's
// clock, as estimated here) and how long it ran (the run's record says
// how long the job took, not when its writes happened), what the job
// logged through its context's logger, and how it ended. result, when not
// nil, receives what the job gave easyjob.SetResult.
func (n *Node) call(ctx context.Context, sp *spec.Spec, t *repository.Task, scheduled time.Time, batch int64, tx *sql.Tx, result *[]byte) (status repository.ExecStatus, began time.Time, took time.Duration, log string, err error) {
	if sp.Opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, sp.Opts.Timeout)
		defer cancel()
	}
	fence := t.Claim()
	run := spec.Run{
		Task: sp.Name, TaskID: int64(t.ID), ScheduledAt: scheduled, Attempt: max(t.Attempt, 1),
		NodeID: int64(n.id()), Version: fence.Version, Tx: tx, Result: result,
	}
	if sp.IsStep() {
		run.ParentResults = n.parentResults(t.ID)
	}
	if sp.Opts.ShardOf != "" {
		run.Shard, run.Shards = sp.Opts.Shard, sp.Opts.Shards
	}
	run.Log = n.newRunLog(runlog.Key{Task: sp.Name, TaskID: run.TaskID, ScheduledAt: scheduled, Attempt: run.Attempt, Batch: batch})
	defer func() { log = n.endRunLog(run.Log) }()
	if a := t.RunArgs(); a != "" {
		run.Args = []byte(a)
	}
	began, start := n.dbNow(), mono()
	if sp.Opts.Overlap == repository.OverlapTerminate && tx == nil {
		// Copies, so that only this branch moves them to the heap: the
		// closure outlives the call when the job is left running.
		jctx, job, r := ctx, sp.Job, run
		err = n.callTerminable(ctx, sp.Name, sp.Opts.OverlapGrace, func() error { return runJob(jctx, job, r) })
	} else {
		err = runJob(ctx, sp.Job, run)
	}
	oc := overlapOf(ctx)
	switch {
	case err != nil && errors.Is(context.Cause(ctx), errSilenced):
		// Recorded apart (fenced rows are outside the start key), so a
		// re-run of the fire on this node gets a row of its own.
		status = repository.ExecFenced // interruptedAgain
		err = fmt.Errorf("interrupted: %w: %w", errSilenced, err)
	case err != nil && sp.Opts.Overlap == repository.OverlapTerminate && terminated(err):
		status = repository.ExecCancelled
	case err != nil && cancelOf(ctx) != nil:
		// Cancelled by an operator (cancel.go); a job that finished its
		// work anyway and returned nil succeeded.
		status = repository.ExecCancelled
		err = fmt.Errorf("%w: %w", cancelOf(ctx), err)
	case oc != nil && err != nil:
		// Cancelled by the task's overlap policy: the job returned an
		// error after its context ended.
		status = repository.ExecCancelled
		err = fmt.Errorf("cancelled: %w: %w", oc, err)
	case oc != nil:
		status = repository.ExecSucceeded // it finished its work as the next fire came: not cancelled
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// The deadline passed before the job returned: timed out, whatever
		// it returned (a job that ignores its context and returns nil late
		// did not succeed within its timeout).
		status = repository.ExecTimedOut
		if err == nil {
			err = fmt.Errorf("timed out after %v: the job returned after its deadline, ignoring its context", sp.Opts.Timeout)
		} else {
			err = fmt.Errorf("timed out after %v: %w", sp.Opts.Timeout, err)
		}
	case err == nil:
		status = repository.ExecSucceeded
	default:
		status = repository.ExecFailed
	}
	took = mono() - start
	if n.obs != nil {
		n.observe(observe.Event{Kind: observe.EventRunEnd, Task: sp.Name, Cron: t.Cron, Scheduled: scheduled, Attempt: max(t.Attempt, 1),
			Status: status, Duration: took, Err: err, At: time.Now()})
	}
	if sp.Opts.Timeout > 0 && took > sp.Opts.Timeout+time.Second {
		n.log.Warn().Str("task", sp.Name).Stringer("ran", took.Round(time.Millisecond)).Stringer("timeout", sp.Opts.Timeout).
			Msg("easyjob: job ignored its context past the timeout and held a worker")
	}
	if err != nil {
		ev := n.log.Warn().Err(err).Str("task", sp.Name).Int("attempt", max(t.Attempt, 1))
		var st stackTracer
		if errors.As(err, &st) {
			ev = ev.Bytes("stack", st.StackTrace())
		}
		ev.Msg("easyjob: job failed")
	}
	return status, began, took, "", err
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

// runJob calls job for run r; its panic becomes its error. The public
// API turns a job's panic into its own error already; this keeps the node
// up whatever a Job does.
func runJob(ctx context.Context, job spec.Job, r spec.Run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("easyjob: job panicked: %v", p)
		}
	}()
	return job(ctx, r)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// stackTracer is an error that carries the stack it was made on (the
// public API's PanicError).
type stackTracer interface{ StackTrace() []byte }

// fired reports a fire about to run to the observer (found at database
// time found) and opens its run; the returned context is the job's and its
// children's parent.
func (n *Node) fired(ctx context.Context, spec *spec.Spec, t *repository.Task, scheduled, found time.Time, misfire repository.MisfireAction, trigger repository.RunKind) (context.Context, func(observe.RunResult)) {
	if n.alerts != nil && trigger != repository.RunChain {
		n.alerts.Started(spec.Name, scheduled, max(found.Sub(scheduled), 0), misfire != "")
	}
	if n.obs == nil {
		return ctx, endNothing
	}
	attempt := max(t.Attempt, 1)
	n.observe(observe.Event{Kind: observe.EventFire, Task: spec.Name, Cron: t.Cron, Scheduled: scheduled, Trigger: trigger,
		Attempt: attempt, Misfire: misfire, Lag: max(found.Sub(scheduled), 0)})
	return n.startRun(ctx, observe.RunInfo{Task: spec.Name, Cron: t.Cron, Scheduled: scheduled, Attempt: attempt, Trigger: trigger, Misfire: misfire})
}

// startRun opens a run for a observe.RunObserver; without one it returns ctx and
// a no-op end.
func (n *Node) startRun(ctx context.Context, r observe.RunInfo) (context.Context, func(observe.RunResult)) {
	ro, ok := n.obs.(observe.RunObserver)
	if !ok {
		return ctx, endNothing
	}
	r.Group, r.Node = n.cfg.Group, int64(n.id())
	return ro.StartRun(ctx, r)
}

func endNothing(observe.RunResult) {}

// observe reports e, stamped with the node's group and id, to the
// observer if there is one.
func (n *Node) observe(e observe.Event) {
	if n.obs == nil {
		return
	}
	e.Group, e.Node = n.cfg.Group, int64(n.id())
	n.obs.Observe(e)
}
