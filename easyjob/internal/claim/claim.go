// Package claim holds the claims a node holds: one Claim per fire it is
// to run, with its life as a state machine (State), and the Set of the
// claims held, one per task, with the epoch that voids them all after a
// silence. The Set also settles a claim's finish (Set.Settle, settle.go):
// from the written row it decides where the claim ends and which claim,
// if any, holds the row for its next fire.
package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/repository"
)

// ErrStopped reports a write or a wait given up because the node stops.
var ErrStopped = errors.New("easyjob: node stopping")

// Claim is one claim this node holds in memory, from the claim statement
// to its finish. Its state (State), whether it is confirmed (Successor),
// the outcome of its start record and the cancel of its run are guarded
// by one lock and change only through its methods.
type Claim struct {
	Task    repository.Task // the row as claimed: ID, Version and NodeID are the fence
	Spec    *spec.Spec
	LocalAt time.Time // local fire time (database time minus clock offset), jitter included
	// Jitter is the fire's delay after its time (TaskOptions.Jitter:
	// schedule.JitterOf, the same on every node); 0 for a manual fire or
	// a retry, which run when asked.
	Jitter time.Duration
	Epoch  int64 // Set epoch when claimed: a silence since voids it
	// Sched is the row's schedule (spec.Spec.ScheduleOf), worked out once
	// per claim, not per fire; SchedErr says why the registered one stands
	// in for a stored cron that does not parse.
	Sched    *schedule.Schedule
	SchedErr error
	// row is the row's own pending fire when the claim runs a backfill
	// fire instead (repository.Task.RunsBackfill: Task's NextStartTime,
	// FireKind and Attempt are then the backfill fire's); zero otherwise.
	row rowFire

	// Set by the boss when it fires the claim (Found), read-only afterwards.
	FoundAt time.Time                // database time the fire was found due
	Misfire repository.MisfireAction // "" when on time
	Kind    repository.RunKind       // why the fire runs
	// Excluded says why the task's exclusion calendar skips the fire, ""
	// when it does not.
	Excluded string
	// CancelAt is the local time the next fire comes due under the
	// overlap policies cancel and terminate, when the run's context is
	// cancelled (Overlap says why); zero for the other policies.
	CancelAt time.Time
	Overlap  error

	// Bookkeeping of internal/dispatch, under the queue's and the pool's
	// own locks: the position in the delay queue (-1 when not queued) and
	// in the pool's running slots.
	QueueIndex int
	Slot       int

	pred atomic.Pointer[Claim] // an unconfirmed successor's predecessor; cleared once it settled

	// state and void change only under mu, through toLocked; they are
	// atomics so that the hot reads (Fence, HasFired) take no lock.
	state atomic.Uint32 // a State
	void  atomic.Bool   // not confirmed: never fires, writes fenced

	mu       sync.Mutex
	waitFrom time.Time               // when it began to wait for a worker
	cancel   context.CancelCauseFunc // set while its job runs
	record   recordState             // whether a start record is written
	started  chan struct{}           // closed once the start record's outcome is known
	exec     repository.Execution
	startErr error
	next     *Claim   // the successor this claim's finish confirms, if any
	waiters  []func() // run once this claim's finish is settled
}

// State is where a claim is in its life on this node. One claim is one
// fire of one task: a claim statement (or a finish that kept the claim)
// makes it, and its finish (or a drop) ends it. The next fire of a kept
// claim is a new Claim.
//
// The legal transitions, and who makes them:
//
//	from \ to   Fired   Finishing   Kept   Released   Fenced   Dropped
//	Queued      boss    ·           ·      ·          ·        boss, drop, void, shutdown
//	Fired       ·       worker      ·      ·          ·        worker (silence, start not recorded)
//	Finishing   ·       ·           Settle Settle     Settle   Settle (write failed, stopping)
//	Kept, Released, Fenced, Dropped: final; no transition leaves them.
//
// Queued: claimed, in the delay queue until its fire time (a child of a
// chain is claimed by its parent's worker and fires at once). Fired: the
// boss took it; it waits for a worker slot or its job runs. Finishing:
// its finish is handed to the completer. Kept: the written finish kept
// the claim for the next fire (a new Claim holds it). Released: the
// finish gave the row back (pending, paused, finished, handed to a peer).
// Fenced: the write found the claim lost (a peer recovered the task).
// Dropped: forgotten without a finish of its own (a silence, shutdown,
// a start record that failed); reconcile releases the row if it is
// still this node's. Every move out of Finishing is Set.Settle's, from
// the written row.
//
// Beside its state, a successor (a claim queued before the finish that
// makes it is written, see Successor) is confirmed or void: a void claim
// never fires, and if it fired already, its job is cancelled and its
// finish carries a fence no row matches (Fenced).
type State uint8

// The states; see State.
const (
	Queued State = iota
	Fired
	Finishing
	Kept
	Released
	Fenced
	Dropped
	numStates
)

var stateNames = [numStates]string{"queued", "fired", "finishing", "kept", "released", "fenced", "dropped"}

func (s State) String() string {
	if s < numStates {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Final reports a state no transition leaves.
func (s State) Final() bool { return s >= Kept && s < numStates }

// legal is the table of State's doc comment: legal[from] is the set of
// states reachable in one step, as bits.
var legal = [numStates]uint8{
	Queued:    bit(Fired) | bit(Dropped),
	Fired:     bit(Finishing) | bit(Dropped),
	Finishing: bit(Kept) | bit(Released) | bit(Fenced) | bit(Dropped),
}

func bit(s State) uint8 { return 1 << s }

// Legal reports whether a claim may go from one state to the other.
func Legal(from, to State) bool {
	return from < numStates && to < numStates && legal[from]&bit(to) != 0
}

// State returns the claim's state.
func (c *Claim) State() State { return c.current() }

// current reads the state without the lock (it changes only under it).
func (c *Claim) current() State { return State(c.state.Load()) }

// To moves the claim to state to if the table of State allows it from
// where it is, and reports whether it did.
func (c *Claim) To(to State) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.toLocked(to)
}

func (c *Claim) toLocked(to State) bool {
	if !Legal(c.current(), to) {
		return false
	}
	c.state.Store(uint32(to))
	return true
}

// AfterSettle runs fn once c's finish is settled, and reports true; it
// reports false and does nothing when it already is.
func (c *Claim) AfterSettle(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current().Final() {
		return false
	}
	c.waiters = append(c.waiters, fn)
	return true
}

// settle ends a Finishing claim in the final state to (Kept, Released,
// Fenced or Dropped) and runs what waited for that. It reports false,
// and does nothing, when the claim was not Finishing.
func (c *Claim) settle(to State) bool {
	c.mu.Lock()
	if c.current() != Finishing || !to.Final() || !c.toLocked(to) {
		c.mu.Unlock()
		return false
	}
	ws := c.waiters
	c.waiters = nil
	next := c.next
	c.next = nil
	c.mu.Unlock()
	if next != nil {
		next.pred.Store(nil) // no chain of claims kept alive through pred
	}
	for _, w := range ws {
		w()
	}
	return true
}

// HasFired reports that the boss took the claim: its job ran or runs.
func (c *Claim) HasFired() bool { return c.current() != Queued }

// markVoidLocked makes c void: it will not fire, and its writes carry a
// fence no row matches. It reports whether c had fired already. c's lock
// is held.
func (c *Claim) markVoidLocked() (fired bool) {
	c.void.Store(true)
	return c.HasFired()
}

// recordState says whether a fire's run gets a start record: one is
// written only for a run still going a while after its fire (the
// starter's delay), so a short run is written once, by its finish.
type recordState uint8

const (
	recordUndecided recordState = iota
	recordAsked                 // the starter writes it; started closes with its outcome
	recordNever                 // the finish came first and appends the run
)

// New returns a Queued claim of row t for spec, firing at local time
// localAt, taken in epoch.
func New(t repository.Task, s *spec.Spec, localAt time.Time, epoch int64) *Claim {
	c := newClaim(t, s, localAt, epoch)
	c.backfill()
	if c.Spec, c.SchedErr = s.ForRow(&t); c.SchedErr != nil {
		c.Sched = &c.Spec.Sched
		c.delay()
		return c
	}
	c.Sched, c.SchedErr = c.Spec.ScheduleOf(&t)
	c.delay()
	return c
}

// backfill makes a claim of a row with a pending backfill fire the claim
// of that fire: its nominal time and kind are the backfill's, and the
// row's own next fire is kept aside (Row) for its finish. It is due at
// once: the caller gives the local time of the row's DueAt.
func (c *Claim) backfill() {
	if !c.Task.RunsBackfill() {
		return
	}
	t := &c.Task
	c.row = rowFire{Next: t.NextStartTime, Kind: t.FireKind, Attempt: t.Attempt}
	t.NextStartTime, t.FireKind, t.Attempt = t.BackfillNext, repository.RunBackfill, 1
}

// rowFire is a row's pending fire: its time, kind and attempt.
type rowFire struct {
	Next    time.Time
	Kind    repository.RunKind
	Attempt int
}

// Backfill reports whether the claim runs a backfill fire.
func (c *Claim) Backfill() bool { return !c.row.Next.IsZero() }

// Row returns the row's own pending fire: the claim's, or for a backfill
// fire the one the row keeps meanwhile, which its finish writes back.
func (c *Claim) Row() (next time.Time, kind repository.RunKind, attempt int) {
	if c.Backfill() {
		return c.row.Next, c.row.Kind, c.row.Attempt
	}
	return c.Task.NextStartTime, c.Task.FireKind, c.Task.Attempt
}

// delay applies the task's jitter to the fire: a cron fire of a task with
// one waits its delay (LocalAt), and is late only from then (Found).
func (c *Claim) delay() {
	if upTo := c.Spec.Opts.Jitter; upTo > 0 && c.Task.FireKind == "" && c.Task.Attempt <= 1 {
		c.Jitter = schedule.JitterOf(c.Task.Name, c.Task.NextStartTime, upTo)
		c.LocalAt = c.LocalAt.Add(c.Jitter)
	}
}

func newClaim(t repository.Task, s *spec.Spec, localAt time.Time, epoch int64) *Claim {
	return &Claim{Task: t, Spec: s, LocalAt: localAt, Epoch: epoch, QueueIndex: -1, started: make(chan struct{})}
}

// Fence is what every write that depends on this claim carries. A void
// successor's fence matches no row: its writes are recorded as fenced.
func (c *Claim) Fence() repository.Claim {
	f := c.Task.Claim()
	if c.void.Load() {
		f.Version = voidVersion
	}
	return f
}

// voidVersion is the version a void claim's writes carry (no row has it).
const voidVersion = -1

// Void reports that the claim is a successor its predecessor's finish
// did not confirm.
func (c *Claim) Void() bool { return c.void.Load() }

// Found records the database time the boss found the fire due, the
// misfire action that lateness calls for, and so the kind of run.
func (c *Claim) Found(now time.Time) {
	c.FoundAt = now
	if misfires(c.Task.FireKind) {
		// A buffered fire is late by the run it waited for, a backfill
		// fire by design: no misfire policy applies to either.
		c.Misfire = schedule.MisfireFor(&c.Spec.Opts, c.Task.NextStartTime.Add(c.Jitter), now)
	}
	c.Kind = repository.KindOf(c.Task, c.Misfire)
}

// Skips reports whether the fire is not to run: its task's calendar
// excludes it, or found late its misfire policy skips it, or its start
// record failed already.
func (c *Claim) Skips() bool {
	return c.Excluded != "" || (c.Misfire != "" && !c.Plan().Run) || c.StartFailed()
}

// Plan is the fire's misfire decision and next fire, as of the time it
// was found due.
func (c *Claim) Plan() schedule.Plan {
	// Lateness counts from the jittered time: the found time moves back by
	// the jitter rather than the fire forward, which would move the next.
	found := c.FoundAt.Add(-c.Jitter)
	if c.Misfire == "" && !misfires(c.Task.FireKind) {
		// A buffered or backfill fire is late by design: planned as on
		// time, its next is the cron's next after it (the overlap policy,
		// at its finish, or the backfill's range decide the rest).
		found = c.Task.NextStartTime
	}
	return schedule.PlanFire(*c.Sched, c.Spec.Opts, c.Task.NextStartTime, found)
}

// misfires reports whether a fire of kind k is subject to the misfire
// policy: not a buffered fire, a backfill's nor a DAG step's.
func misfires(k repository.RunKind) bool {
	// A DAG step's fire (kind chain) is as late as its parents were: it
	// runs, whenever they made it due.
	return k != repository.RunBuffered && k != repository.RunBackfill && k != repository.RunChain
}

// Wait records that the claim waits for a worker since at.
func (c *Claim) Wait(at time.Time) {
	c.mu.Lock()
	c.waitFrom = at
	c.mu.Unlock()
}

// WaitingSince is when the claim began to wait for a worker.
func (c *Claim) WaitingSince() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waitFrom
}

// Run records the cancel of the job's context. When the start already
// failed, or the claim is void, the job is cancelled at once.
func (c *Claim) Run(cancel context.CancelCauseFunc) {
	c.mu.Lock()
	c.cancel = cancel
	failed := c.startErr != nil || c.void.Load()
	c.mu.Unlock()
	if failed {
		cancel(nil)
	}
}

// Stop cancels the job's context if it runs.
func (c *Claim) Stop() { c.StopWith(nil) }

// StopWith cancels the job's context if it runs, with cause as
// context.Cause reports it (an operator's cancel, say).
func (c *Claim) StopWith(cause error) {
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// SetStarted publishes the outcome of the start record; a failed start
// cancels the job: the claim is lost or unrecorded, the fire is not ours.
func (c *Claim) SetStarted(e repository.Execution, err error) {
	c.mu.Lock()
	c.exec, c.startErr, c.record = e, err, recordAsked
	c.mu.Unlock()
	if err != nil {
		c.Stop()
	}
	close(c.started)
}

// waitStarted waits for the start record's outcome, or for stop (the
// starter is gone, so it will never come).
func (c *Claim) waitStarted(stop <-chan struct{}) (repository.Execution, error) {
	select {
	case <-c.started:
	case <-stop:
		return repository.Execution{}, ErrStopped
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exec, c.startErr
}

// AskRecord reports whether the starter should write the start record
// now: not when the finish came first.
func (c *Claim) AskRecord() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.record != recordUndecided {
		return false
	}
	c.record = recordAsked
	return true
}

// Slots is where a running claim gives its worker slot back (the
// dispatch pool).
type Slots interface{ Done(c *Claim) }

// Recorded is the start record the finish closes. When none was asked
// yet, none will be: it reports appendRun and the finish writes the run
// whole (Finish.Run). Otherwise it gives c's slot back to free, if not
// nil (a job must not hold a worker while it waits on a write), and waits
// for the record, or for stop.
func (c *Claim) Recorded(stop <-chan struct{}, free Slots) (e repository.Execution, appendRun bool, err error) {
	c.mu.Lock()
	if c.record == recordUndecided {
		c.record = recordNever
		c.mu.Unlock()
		return repository.Execution{}, true, nil
	}
	c.mu.Unlock()
	if free != nil {
		free.Done(c)
	}
	e, err = c.waitStarted(stop)
	return e, false, err
}

// RunRecord is the execution a finish appends for this claim's fire.
func (c *Claim) RunRecord() *repository.Execution {
	return &repository.Execution{
		ScheduledAt: c.Task.NextStartTime, Attempt: max(c.Task.Attempt, 1), Misfire: c.Misfire, Kind: c.Kind,
		Args: c.Task.RunArgs(), Revision: c.Task.Revision, Batch: c.Batch(),
	}
}

// Batch tells this fire's runs apart from the fire's own runs at its time
// (repository.Execution.Batch): a backfill's time asked, in Unix
// microseconds; 0 for any other fire.
func (c *Claim) Batch() int64 {
	if !c.Backfill() || c.Task.BackfillAt.IsZero() {
		return 0
	}
	return c.Task.BackfillAt.UnixMicro()
}

// StartFailed reports, without waiting, that the start already failed.
func (c *Claim) StartFailed() bool {
	select {
	case <-c.started:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.startErr != nil
	default:
		return false
	}
}

// String names the claim in logs and test failures.
func (c *Claim) String() string {
	return fmt.Sprintf("%s@%s v%d (%s)", c.Task.Name, c.Task.NextStartTime.Format(time.RFC3339Nano), c.Task.Version, c.State())
}
