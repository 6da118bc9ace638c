package easyjob

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/repository"
)

// starter records the start of due fires in batches: one statement for all
// fires due together, each row fenced. It runs beside the jobs, not before
// them, so a fire starts on its second instead of after a round trip. That
// is no weaker than checking first: the node stops firing on its own once
// it is silent long enough for peers to recover its tasks (see suspect),
// and a start that finds the claim lost cancels the job's context at once.
type starter struct {
	store repository.ExecutionStore
	log   zerolog.Logger
	pool  *pool         // settle waits for the fires queued behind a burst
	lost  func()        // a write failed or a claim was lost: reconcile soon
	stats *stats        // fenced starts
	in    chan []*claim // one slice per boss pass: the starter wakes once per burst
	max   int           // claims per statement
}

// maxStartBatch bounds one StartExecutions statement.
const maxStartBatch = 1000

// maxStartDefer bounds how long start records wait for the fires queued
// behind them to get a worker, and startQuiet is how long after its fire
// time a burst's records are written at the earliest (see settle). A
// parent holds its worker until its start is recorded, so both stay short.
const (
	maxStartDefer = 20 * time.Millisecond
	startQuiet    = 15 * time.Millisecond
)

func newStarter(store repository.ExecutionStore, log zerolog.Logger, p *pool, st *stats, lost func()) *starter {
	// Buffered so the boss never waits on a statement in flight.
	return &starter{store: store, log: log, pool: p, stats: st, lost: lost, in: make(chan []*claim, 1024), max: maxStartBatch}
}

// enqueue hands the fires of one boss pass to the starter.
func (s *starter) enqueue(cs []*claim) {
	if len(cs) > 0 {
		s.in <- cs
	}
}

// run writes batches until ctx is done; starts still queued then fail with
// errStopped so nothing waits on them forever.
func (s *starter) run(ctx context.Context) {
	var pending []*claim
	for {
		if len(pending) == 0 {
			select {
			case <-ctx.Done():
				for {
					select {
					case cs := <-s.in:
						for _, c := range cs {
							c.setStarted(repository.Execution{}, errStopped)
						}
					default:
						return
					}
				}
			case cs := <-s.in:
				pending = append(pending, cs...)
			}
			s.settle(ctx, pending[0])
		}
	collect:
		for len(pending) < s.max {
			select {
			case cs := <-s.in:
				pending = append(pending, cs...)
			default:
				break collect
			}
		}
		k := min(len(pending), s.max)
		s.start(ctx, pending[:k])
		pending = append(pending[:0], pending[k:]...)
	}
}

// settle delays the start records of a burst until every fire queued
// behind it has a worker (at most maxStartDefer) and until startQuiet
// after its fire time. The jobs already run and do not wait for their
// records, so the fires lose nothing; the statement no longer takes CPU
// from the jobs still starting, on this node or on nodes that share its
// host or its database. The price: a lost claim is noticed that much later.
func (s *starter) settle(ctx context.Context, first *claim) {
	s.pool.waitSettled(ctx, maxStartDefer)
	if wait := time.Until(first.localAt.Add(startQuiet)); wait > 0 {
		sleep(ctx, wait)
	}
}

// start records the starts of batch.
func (s *starter) start(ctx context.Context, batch []*claim) {
	reqs := make([]repository.ExecStart, len(batch))
	for i, c := range batch {
		reqs[i] = repository.ExecStart{Claim: c.fence(), Execution: repository.Execution{
			ScheduledAt: c.task.NextStartTime, Attempt: max(c.task.Attempt, 1), Misfire: c.misfire,
		}}
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
		wait := backoff(attempt, 50*time.Millisecond, 2*time.Second)
		s.log.Warn().Err(err).Int("starts", len(reqs)).Dur("retry_in", wait).Msg("easyjob: recording starts failed")
		if !sleep(ctx, wait) {
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
			s.log.Warn().Str("task", c.task.Name).Msg("easyjob: claim lost at start; cancelling the run")
		case cerr != nil:
			s.log.Warn().Err(cerr).Str("task", c.task.Name).Msg("easyjob: could not record start; cancelling the run")
		}
		c.setStarted(e, cerr)
	}
}
