package easyjob

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/repository"
)

// completer groups the finishes of many workers into one Finish statement
// (each row keeps its own fence). It flushes as soon as the previous
// statement returned, so a lone finish waits for nobody, and under load
// the batch grows instead of the queue of round trips.
type completer struct {
	store repository.Store
	log   zerolog.Logger
	in    chan finishReq
}

type finishReq struct {
	f    repository.Finish
	done chan repository.FinishResult
}

const maxFinishBatch = 500

func newCompleter(store repository.Store, log zerolog.Logger) *completer {
	return &completer{store: store, log: log, in: make(chan finishReq, maxFinishBatch)}
}

// finish submits f and waits for its result. It gives up only when ctx
// (the caller's patience) is done.
func (c *completer) finish(ctx context.Context, f repository.Finish) repository.FinishResult {
	req := finishReq{f: f, done: make(chan repository.FinishResult, 1)}
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

// run writes batches until ctx is done. A failed statement is retried with
// backoff: a result is never dropped while the node lives.
func (c *completer) run(ctx context.Context) {
	batch := make([]finishReq, 0, maxFinishBatch)
	for {
		batch = batch[:0]
		select {
		case <-ctx.Done():
			return
		case r := <-c.in:
			batch = append(batch, r)
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
		c.write(ctx, batch)
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
