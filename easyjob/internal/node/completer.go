package node

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// completer groups the finishes of many workers into Finish statements
// (each row keeps its own fence). A batch goes out as soon as one of
// maxFinishInFlight statements is free, so a lone finish waits for nobody;
// while all are busy the next batch grows instead of a queue of round
// trips, and a slow statement does not hold back the finishes behind it.
//
// Submitting never blocks and nobody waits for the write: a worker hands
// its finish over and is free, and the result is delivered to a callback
// on the statement's goroutine. The finish itself is built (build) after
// the burst of jobs it belongs to has started, so the next-fire
// arithmetic, and the queueing of a kept claim's next fire that goes with
// it (internal/claim: Claim.Successor), do not take CPU from jobs starting; but it is built
// as soon as that is over, even when every statement is busy and its
// batch must wait, so the next fire never waits for a write.
type completer struct {
	store repository.RunStore
	out   *outage                 // failed writes
	hold  func() (release func()) // held around a statement and the delivery of its results (the claim gate)

	burstQuiet atomic.Int64 // local unix nanos: no finish of a burst's fires is built or written before (quietAfterBurst)
	lastWrite  atomic.Int64 // local unix nanos: when the last Finish statement returned

	mu      sync.Mutex
	queue   []*finishReq
	built   int           // the first built requests of queue (only run changes it)
	stopped bool          // run has returned: submissions fail at once
	ready   chan struct{} // poked when the queue becomes non-empty
}

// finishJob is one finish handed to the completer: build makes it (after
// the burst its fire started in), done receives it and its result. One
// object per fire, not a closure per step: these are allocated in the
// burst, where a garbage collection they start slows every job starting.
type finishJob interface {
	build() repository.Finish
	done(repository.Finish, repository.FinishResult)
}

// finishReq is the completer's part of a queued finish. It lives inside
// the finishJob's own object (one allocation per fire).
type finishReq struct {
	job   finishJob
	quiet time.Time           // not built or written before this local time (see run)
	f     *repository.Finish  // once built: allocated then, not in the burst
	tx    repository.FinishTx // the job's transaction (InTx): committed with f, alone
}

// abandon rolls back r's transaction, if any: its finish will not be
// written with it.
func (r *finishReq) abandon() {
	if r.tx != nil {
		_ = r.tx.Rollback() // nothing to do if it fails: the connection is gone, and the transaction with it
		r.tx = nil
	}
}

// finish returns the request's finish, building it if not yet.
func (r *finishReq) finish() repository.Finish {
	if r.f == nil {
		f := r.job.build()
		r.f = &f
	}
	return *r.f
}

// maxFinishBatch bounds one Finish statement, maxFinishInFlight the
// statements one node has in flight. finishQuiet is how long after its
// fire time a finish is written at the earliest: the jobs of a second
// start on every node of the group at once, and the statements should
// not take the CPU they start on (the database often shares their host).
const (
	maxFinishBatch    = 500
	maxFinishInFlight = 4
	finishQuiet       = 15 * time.Millisecond
)

// A burst's finishes wait for the burst to have started on the peers too
// (quietAfterBurst): every node of a group fires the same second at once,
// each its share of a burst of about the same size, and a node that wrote
// its finishes once its own jobs had started took the database's CPU
// (often on the same host) from the jobs its peers were still starting.
// burstQuietPerFire is about what a fire costs the nodes of this 2-core
// machine to start: a burst of 6 667 fires a node holds its finishes
// 15 ms + 53 ms, one of 300 for 17 ms; burstQuietMax bounds the hold.
// No hold when a statement returned within burstQuietBusy: the node's
// finishes of the last bursts are still being written, and held, the
// database's work would only move into the next burst (a group near its
// capacity lost a tenth of it so).
const (
	burstQuietPerFire = 8 * time.Microsecond
	burstQuietMax     = 150 * time.Millisecond
	burstQuietBusy    = 250 * time.Millisecond
)

// quietAfterBurst holds the finishes of fires dispatched at local time
// now in a burst of n until the burst is likely under way on every node.
func (c *completer) quietAfterBurst(now time.Time, n int) {
	if now.UnixNano()-c.lastWrite.Load() < int64(burstQuietBusy) {
		return
	}
	until := now.Add(finishQuiet + min(time.Duration(n)*burstQuietPerFire, burstQuietMax)).UnixNano()
	for {
		cur := c.burstQuiet.Load()
		if cur >= until || c.burstQuiet.CompareAndSwap(cur, until) {
			return
		}
	}
}

// maxWriteRetry caps the backoff of a finish or start write that failed:
// a kept claim's next fire may run before its finish is written, but the
// fire after that waits for it, so after an outage fires resume within
// about this long of the database answering. A few failed attempts a
// second per node cost little.
const maxWriteRetry = 500 * time.Millisecond

func newCompleter(store repository.RunStore, out *outage, hold func() (release func())) *completer {
	return &completer{store: store, out: out, hold: hold, ready: make(chan struct{}, 1)}
}

// submit queues r, the finish that r.job builds, of a fire at local time
// fired; r.job.done receives it and its result once written, or an error
// once the completer stopped. done runs on a completer goroutine (or on
// the caller's, when the completer already stopped) and must not block
// long: the other results of its statement wait for it.
func (c *completer) submit(r *finishReq, fired time.Time) {
	r.quiet = fired.Add(finishQuiet)
	if b := c.burstQuiet.Load(); b > r.quiet.UnixNano() && b-fired.UnixNano() <= int64(finishQuiet+burstQuietMax) {
		r.quiet = time.Unix(0, b) // a fire of the burst that set it
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		r.abandon()
		r.job.done(r.finish(), repository.FinishResult{Err: fmt.Errorf("easyjob: finish not written: %w", claim.ErrStopped)})
		return
	}
	c.queue = append(c.queue, r)
	first := len(c.queue) == 1
	c.mu.Unlock()
	if first {
		select {
		case c.ready <- struct{}{}:
		default:
		}
	}
}

// take removes and returns up to limit queued requests, oldest first.
func (c *completer) take(limit int) []*finishReq {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := min(len(c.queue), limit)
	batch := make([]*finishReq, k)
	copy(batch, c.queue[:k])
	clear(c.queue[:k])
	c.queue = c.queue[k:]
	c.built = max(c.built-k, 0)
	if len(c.queue) == 0 {
		c.queue = nil // let the backing array go after a burst
	}
	return batch
}

// prepare builds the queued requests whose quiet time has passed and that
// are not built yet. Only run calls it, as it does take, so the requests
// it builds outside the lock stay queued meanwhile.
func (c *completer) prepare(now time.Time) {
	c.mu.Lock()
	from, to := c.built, c.built
	for to < len(c.queue) && !c.queue[to].quiet.After(now) {
		to++
	}
	reqs := append([]*finishReq(nil), c.queue[from:to]...)
	c.mu.Unlock()
	for _, r := range reqs {
		r.finish()
	}
	c.mu.Lock()
	c.built = to
	c.mu.Unlock()
}

// oldestQuiet returns the quiet time of the oldest queued request, and
// false when none is queued.
func (c *completer) oldestQuiet() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		return time.Time{}, false
	}
	return c.queue[0].quiet, true
}

// run writes batches until ctx is done, waits for those in flight, then
// fails whatever is still queued or submitted later. A failed statement
// is retried with backoff: a result is never dropped while the node
// lives. Before a batch goes out it waits for its oldest finish's quiet
// time, then settle waits (briefly) for the fires still queued behind a
// burst to get a worker: the statement should not take CPU from jobs
// still starting, and the batch grows meanwhile. Settling after the quiet
// time, not before it, covers a burst that outlasts its estimate (a slow
// server, a collection): p99 of 20 000 fires in one second 34-60 ms
// against 84-106 ms on a day this machine's server was slow. While every statement is
// busy, the requests that come in are built every finishQuiet, so their
// next fires are queued without waiting for a free statement.
func (c *completer) run(ctx context.Context, settle func(context.Context)) {
	var wg sync.WaitGroup
	defer c.stop(&wg)
	slots := make(chan struct{}, maxFinishInFlight)
	tick := time.NewTimer(time.Hour)
	defer tick.Stop()
	for {
		quiet, ok := c.oldestQuiet()
		for !ok {
			select {
			case <-ctx.Done():
				return
			case <-c.ready:
			}
			quiet, ok = c.oldestQuiet()
		}
		if wait := time.Until(quiet); wait > 0 && !schedule.Sleep(ctx, wait) {
			return
		}
		settle(ctx)
		c.prepare(time.Now())
		// A free slot: while none is, requests queue up and make the next
		// batch, and are built as they come.
		for free := false; !free; {
			tick.Reset(finishQuiet)
			select {
			case <-ctx.Done():
				return
			case slots <- struct{}{}:
				free = true
			case <-tick.C:
				c.prepare(time.Now())
			}
			if !tick.Stop() {
				select {
				case <-tick.C:
				default:
				}
			}
		}
		batch := c.take(maxFinishBatch)
		wg.Go(func() {
			defer func() { <-slots }()
			c.write(ctx, batch)
		})
	}
}

// stop waits for the statements in flight, then fails every request
// still queued; later submissions fail at once.
func (c *completer) stop(wg *sync.WaitGroup) {
	wg.Wait()
	c.mu.Lock()
	c.stopped = true
	left := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, r := range left {
		r.abandon()
		r.job.done(r.finish(), repository.FinishResult{Err: fmt.Errorf("easyjob: finish not written: %w", claim.ErrStopped)})
	}
}

// write builds the finishes of batch, writes them in one statement
// (retried while ctx lives) and delivers each result, all under hold.
func (c *completer) write(ctx context.Context, batch []*finishReq) {
	// One hold per statement, not per finish: a reconcile waiting for the
	// gate would otherwise block this batch halfway through its holds.
	defer c.hold()()
	fs := make([]repository.Finish, 0, len(batch))
	rest := batch[:0]
	for _, r := range batch {
		if r.tx != nil && c.commitTx(ctx, r) {
			continue
		}
		fs = append(fs, r.finish())
		rest = append(rest, r)
	}
	if batch = rest; len(batch) == 0 {
		return
	}
	defer func() { c.lastWrite.Store(time.Now().UnixNano()) }()
	for attempt := 1; ; attempt++ {
		res, err := c.store.Finish(ctx, fs)
		if err == nil {
			for i, r := range batch {
				r.job.done(fs[i], res[i])
			}
			return
		}
		wait := schedule.Backoff(attempt, 50*time.Millisecond, maxWriteRetry)
		c.out.fail("Finish", err, wait)
		if !schedule.Sleep(ctx, wait) {
			for i, r := range batch {
				r.job.done(fs[i], repository.FinishResult{Err: fmt.Errorf("easyjob: finish not written: %w", err)})
			}
			return
		}
	}
}

// txCommitBound bounds the commit of a job's transaction: on a silent
// connection it would otherwise wait for ever.
const txCommitBound = 10 * time.Second

// commitTx writes r's finish in r's transaction (InTx), alone, and
// reports whether r is done. When the transaction did not commit, r goes
// to the batch statement: fenced, it is recorded fenced (the job's writes
// were rolled back with it); failed, it is recorded failed, for its
// writes did not take effect. A commit whose reply was lost but that did
// commit keeps its succeeded row: a finish never reopens a row that ended.
func (c *completer) commitTx(ctx context.Context, r *finishReq) bool {
	tx := r.tx
	r.tx = nil
	f := r.finish()
	cctx, cancel := context.WithTimeout(ctx, txCommitBound)
	res, err := tx.Commit(cctx, f)
	cancel()
	switch {
	case err == nil && res.Err == nil:
		r.job.done(f, res)
		return true
	case err != nil:
		_ = tx.Rollback()
		f.Status, f.Error = repository.ExecFailed, "easyjob: the job's transaction did not commit: "+err.Error()
		*r.f = f
		// Not an outage as such: a job can leave its transaction unusable
		// (a failed statement it ignored), and the batch says if the
		// database is away.
		c.out.log.Warn().Err(err).Int64("task", int64(f.Claim.ID)).Msg("easyjob: a job's transaction did not commit; recording the run failed")
	}
	return false
}
