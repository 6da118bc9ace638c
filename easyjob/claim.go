package easyjob

import (
	"context"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// claim is one claim this node holds in memory, from the claim statement
// to its finish: queued in the delay queue, waiting for a worker, running.
// It owns the state of that life: its fence, the epoch it was taken in,
// the outcome of its start record and the cancel of its run.
type claim struct {
	task    repository.Task // the row as claimed: ID, Version and NodeID are the fence
	spec    *taskSpec
	localAt time.Time // local fire time (database time minus clock offset)
	epoch   int64     // claimSet epoch when claimed: a silence since voids it
	index   int       // position in the delay queue, -1 when not queued (the queue's lock)

	// Set by the boss when it fires the claim, read-only afterwards.
	foundAt time.Time                // database time the fire was found due
	misfire repository.MisfireAction // "" when on time

	successorState // a kept claim queued before its predecessor's finish is written (successor.go)

	slot int // index in the pool's running claims while its job holds a slot (the pool's lock)

	mu       sync.Mutex
	waitFrom time.Time          // when it began to wait for a worker
	cancel   context.CancelFunc // set while its job runs
	record   recordState        // whether a start record is written (starter.go)
	started  chan struct{}      // closed once the start record's outcome is known
	exec     repository.Execution
	startErr error
}

// recordState says whether a fire's run gets a start record: one is
// written only for a run still going startRecordAfter after its fire, so
// a short run is written once, by its finish.
type recordState uint8

const (
	recordUndecided recordState = iota
	recordAsked                 // the starter writes it; started closes with its outcome
	recordNever                 // the finish came first and appends the run
)

func newClaim(t repository.Task, spec *taskSpec, localAt time.Time, epoch int64) *claim {
	return &claim{task: t, spec: spec, localAt: localAt, epoch: epoch, index: -1, started: make(chan struct{})}
}

// fence is what every write that depends on this claim carries. A void
// successor's fence matches no row: its writes are recorded as fenced.
func (c *claim) fence() repository.Claim {
	f := c.task.Claim()
	if c.void.Load() {
		f.Version = voidVersion
	}
	return f
}

// voidVersion is the version a void claim's writes carry (no row has it).
const voidVersion = -1

// fire marks the claim fired at database time now.
func (c *claim) fire(now time.Time) {
	c.foundAt = now
	c.misfire = misfireFor(&c.spec.opts, c.task.NextStartTime, now)
}

// wait records that the claim waits for a worker since at.
func (c *claim) wait(at time.Time) {
	c.mu.Lock()
	c.waitFrom = at
	c.mu.Unlock()
}

func (c *claim) waitingSince() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waitFrom
}

// run records the cancel of the job's context. When the start already
// failed, or the claim is a void successor, the job is cancelled at once.
func (c *claim) run(cancel context.CancelFunc) {
	c.mu.Lock()
	c.cancel = cancel
	failed := c.startErr != nil || c.void.Load()
	c.mu.Unlock()
	if failed {
		cancel()
	}
}

// stop cancels the job's context if it runs.
func (c *claim) stop() {
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// setStarted publishes the outcome of the start record; a failed start
// cancels the job: the claim is lost or unrecorded, the fire is not ours.
func (c *claim) setStarted(e repository.Execution, err error) {
	c.mu.Lock()
	c.exec, c.startErr, c.record = e, err, recordAsked
	c.mu.Unlock()
	if err != nil {
		c.stop()
	}
	close(c.started)
}

// waitStarted waits for the start record's outcome, or for stop (the
// starter is gone, so it will never come).
func (c *claim) waitStarted(stop <-chan struct{}) (repository.Execution, error) {
	select {
	case <-c.started:
	case <-stop:
		return repository.Execution{}, errStopped
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exec, c.startErr
}

// askRecord reports whether the starter should write the start record
// now: not when the finish came first.
func (c *claim) askRecord() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.record != recordUndecided {
		return false
	}
	c.record = recordAsked
	return true
}

// recorded is the start record the finish closes. When none was asked
// yet, none will be: it reports appendRun and the finish writes the run
// whole (Finish.Run). Otherwise it gives c's worker slot back to free, if
// not nil, and waits for the record (waitStarted).
func (c *claim) recorded(stop <-chan struct{}, free *pool) (e repository.Execution, appendRun bool, err error) {
	c.mu.Lock()
	if c.record == recordUndecided {
		c.record = recordNever
		c.mu.Unlock()
		return repository.Execution{}, true, nil
	}
	c.mu.Unlock()
	if free != nil {
		free.done(c)
	}
	e, err = c.waitStarted(stop)
	return e, false, err
}

// run is the execution a finish appends for this claim's fire.
func (c *claim) runRecord() *repository.Execution {
	return &repository.Execution{ScheduledAt: c.task.NextStartTime, Attempt: max(c.task.Attempt, 1), Misfire: c.misfire}
}

// startFailed reports, without waiting, that the start already failed.
func (c *claim) startFailed() bool {
	select {
	case <-c.started:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.startErr != nil
	default:
		return false
	}
}
