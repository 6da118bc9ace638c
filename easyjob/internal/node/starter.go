package node

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/dispatch"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// starter writes start records, in batches, for the runs that last: a
// fire's run gets one only when it is still going StartRecordAfter after
// its fire time; a shorter run is written once, whole, by its finish
// (Finish.Run), so the hot path appends one history row per fire instead
// of inserting and then updating it. The record runs beside the job, never
// before it, so a fire starts on its second. That is no weaker than
// checking first: the node stops firing on its own once it is silent long
// enough for peers to recover its tasks (see suspect), and a start that
// finds the claim lost cancels the job's context at once. A run
// interrupted before its record still shows: recovery writes the fire an
// abandoned row (RecoverAll).
type starter struct {
	store repository.RunStore
	out   *outage             // failed writes; its log is the starter's
	pool  *dispatch.Pool      // settle waits for the fires queued behind a burst
	lost  func()              // a write failed or a claim was lost: reconcile soon
	stats *stats              // fenced starts
	in    chan []*claim.Claim // one slice per boss pass: the starter wakes once per burst
	max   int                 // claims per statement
	after time.Duration       // StartRecordAfter

	// Records of successors asked before their claim was confirmed wait
	// for the confirmation (internal/claim: Claim.Successor), then come back here.
	mu      sync.Mutex
	resumed []*claim.Claim
	poke    chan struct{}
}

// maxStartBatch bounds one StartExecutions statement.
const maxStartBatch = 1000

// StartRecordAfter is how long a run goes before its start is recorded.
// Long enough that most cron jobs end first (one history write per fire),
// short enough that a run its node is killed in, or a claim lost under
// it, is seen within a couple of seconds. Not a whole number of seconds:
// the check of a second's fires takes each claim's lock, and at a whole
// second after them it ran just as the next second's fires started (an
// every-second cron), on the same cores.
const StartRecordAfter = 1500 * time.Millisecond

// maxStartDefer bounds how long start records wait for the fires queued
// behind them to get a worker (see settle).
const maxStartDefer = 20 * time.Millisecond

func newStarter(store repository.RunStore, out *outage, p *dispatch.Pool, st *stats, lost func()) *starter {
	// Buffered so the boss never waits on a statement in flight.
	return &starter{
		store: store, out: out, pool: p, stats: st, lost: lost,
		in: make(chan []*claim.Claim, 1024), max: maxStartBatch, after: StartRecordAfter,
		poke: make(chan struct{}, 1),
	}
}

// enqueue hands the fires of one boss pass to the starter.
func (s *starter) enqueue(cs []*claim.Claim) {
	if len(cs) > 0 {
		s.in <- cs
	}
}

// run writes the records that come due until ctx is done; records asked
// then fail with claim.ErrStopped so nothing waits on them forever.
func (s *starter) run(ctx context.Context) {
	var waiting []*claim.Claim // in fire order, as the boss fires them
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		k := 0
		for k < len(waiting) && !waiting[k].LocalAt.Add(s.after).After(now) {
			k++
		}
		if k > 0 {
			var due []*claim.Claim
			for _, c := range waiting[:k] {
				if c.AskRecord() {
					due = append(due, c)
				}
			}
			clear(waiting[:k])
			waiting = waiting[k:]
			s.write(ctx, due)
			continue
		}
		wait := time.Hour
		if len(waiting) > 0 {
			wait = time.Until(waiting[0].LocalAt.Add(s.after))
		}
		timer.Reset(max(wait, 0))
		select {
		case <-ctx.Done():
			s.stop(waiting)
			return
		case cs := <-s.in:
			waiting = append(waiting, cs...)
		case <-s.poke:
			s.write(ctx, s.takeResumed())
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// stop fails the records still to be written, so nothing waits on them.
func (s *starter) stop(waiting []*claim.Claim) {
	for _, c := range s.takeResumed() {
		c.SetStarted(repository.Execution{}, claim.ErrStopped) // asked already
	}
	for {
		for _, c := range waiting {
			if c.AskRecord() {
				c.SetStarted(repository.Execution{}, claim.ErrStopped)
			}
		}
		select {
		case waiting = <-s.in:
		default:
			return
		}
	}
}

// write records the starts of due in statements of at most max rows,
// after the fires queued behind them got a worker (at most
// maxStartDefer): the statement should not take CPU from jobs starting.
func (s *starter) write(ctx context.Context, due []*claim.Claim) {
	if len(due) == 0 {
		return
	}
	s.pool.WaitSettled(ctx, maxStartDefer)
	for len(due) > 0 {
		k := min(len(due), s.max)
		s.start(ctx, due[:k])
		due = due[k:]
	}
}

// resume hands back the record of c, whose claim is now confirmed or
// void. It never blocks: it runs on the goroutine that settled the claim
// before.
func (s *starter) resume(c *claim.Claim) {
	s.mu.Lock()
	s.resumed = append(s.resumed, c)
	s.mu.Unlock()
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

func (s *starter) takeResumed() []*claim.Claim {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.resumed
	s.resumed = nil
	return cs
}

// start records the starts of batch. The record of a successor not yet
// confirmed waits for its confirmation (resume): written now, it would
// find the row still at the version before and cancel a fire that is
// ours.
func (s *starter) start(ctx context.Context, batch []*claim.Claim) {
	ready := batch[:0:0]
	for _, c := range batch {
		if p := c.Pred(); p != nil && p.AfterSettle(func() { s.resume(c) }) {
			continue
		}
		ready = append(ready, c)
	}
	if batch = ready; len(batch) == 0 {
		return
	}
	reqs := make([]repository.ExecStart, len(batch))
	for i, c := range batch {
		reqs[i] = repository.ExecStart{Claim: c.Fence(), Execution: *c.RunRecord()}
	}
	// A failed statement (the database away) is retried until it answers:
	// the jobs already run, so their starts must be recorded, fenced, before
	// their finishes; the start key makes a retry after a lost reply safe.
	var res []repository.StartResult
	var err error
	for attempt := 1; ; attempt++ {
		if res, err = s.store.StartExecutions(ctx, reqs); err == nil || ctx.Err() != nil {
			break
		}
		s.lost()
		wait := schedule.Backoff(attempt, 50*time.Millisecond, maxWriteRetry)
		s.out.fail("StartExecutions", err, wait)
		if !schedule.Sleep(ctx, wait) {
			break
		}
	}
	for i, c := range batch {
		e, cerr := repository.Execution{}, err
		if err == nil {
			e, cerr = res[i].Execution, res[i].Err
		}
		switch {
		case errors.Is(cerr, repository.ErrClaimLost):
			s.stats.fenced.Add(1)
			s.out.log.Warn().Str("task", c.Task.Name).Msg("easyjob: claim lost at start; cancelling the run")
		case cerr != nil:
			s.out.log.Warn().Err(cerr).Str("task", c.Task.Name).Msg("easyjob: could not record start; cancelling the run")
		}
		c.SetStarted(e, cerr)
	}
}
