package easyjob

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/repository"
)

// completer groups the finishes of many workers into Finish statements
// (each row keeps its own fence). A batch goes out as soon as one of
// maxFinishInFlight statements is free, so a lone finish waits for nobody;
// while all are busy the next batch grows instead of a queue of round
// trips, and a slow statement does not hold back the finishes behind it
// (a kept claim's next fire is queued only once its finish returned).
type completer struct {
	store repository.Store
	log   zerolog.Logger
	in    chan finishReq
}

type finishReq struct {
	f     repository.Finish
	quiet time.Time // not written before this local time (see run)
	done  chan repository.FinishResult
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

func newCompleter(store repository.Store, log zerolog.Logger) *completer {
	return &completer{store: store, log: log, in: make(chan finishReq, maxFinishBatch)}
}

// finish submits f, the finish of a fire at local time fired, and waits
// for its result. It gives up only when ctx (the caller's patience) is
// done.
func (c *completer) finish(ctx context.Context, f repository.Finish, fired time.Time) repository.FinishResult {
	req := finishReq{f: f, quiet: fired.Add(finishQuiet), done: make(chan repository.FinishResult, 1)}
	select {
	case c.in <- req:
	case <-ctx.Done():
		return repository.FinishResult{Err: fmt.Errorf("easyjob: finish not written: %w", ctx.Err())}
	}
	select {
	case r := <-req.done:
		return r
	case <-ctx.Done():
		return repository.FinishResult{Err: fmt.Errorf("easyjob: finish not confirmed: %w", ctx.Err())}
	}
}

// run writes batches until ctx is done, and waits for those in flight. A
// failed statement is retried with backoff: a result is never dropped
// while the node lives. Before a batch goes out, settle waits (briefly)
// for the fires queued behind a burst to get a worker, and the batch
// waits for its first finish's quiet time: the statement should not take
// CPU from jobs still starting, and the batch grows meanwhile.
func (c *completer) run(ctx context.Context, settle func(context.Context)) {
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, maxFinishInFlight)
	for {
		// A free slot first: while none is, requests queue up in c.in and
		// make the next batch.
		select {
		case <-ctx.Done():
			return
		case slots <- struct{}{}:
		}
		batch := make([]finishReq, 0, 8)
		select {
		case <-ctx.Done():
			return
		case r := <-c.in:
			batch = append(batch, r)
		}
		settle(ctx)
		if wait := time.Until(batch[0].quiet); wait > 0 {
			sleep(ctx, wait)
		}
	collect:
		for len(batch) < maxFinishBatch {
			select {
			case r := <-c.in:
				batch = append(batch, r)
			default:
				break collect
			}
		}
		wg.Go(func() {
			defer func() { <-slots }()
			c.write(ctx, batch)
		})
	}
}

func (c *completer) write(ctx context.Context, batch []finishReq) {
	fs := make([]repository.Finish, len(batch))
	for i, r := range batch {
		fs[i] = r.f
	}
	for attempt := 1; ; attempt++ {
		res, err := c.store.Finish(ctx, fs)
		if err == nil {
			for i, r := range batch {
				r.done <- res[i]
			}
			return
		}
		wait := backoff(attempt, 50*time.Millisecond, 2*time.Second)
		c.log.Warn().Err(err).Int("finishes", len(fs)).Dur("retry_in", wait).Msg("easyjob: finish failed")
		if !sleep(ctx, wait) {
			for _, r := range batch {
				r.done <- repository.FinishResult{Err: fmt.Errorf("easyjob: finish not written: %w", err)}
			}
			return
		}
	}
}
