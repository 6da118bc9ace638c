package node

import (
	"context"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// AbandonAfter bounds the wait for jobs after their contexts were
// cancelled at the end of the shutdown grace: Run returns at most
// ShutdownGrace + AbandonAfter + 2 × ShutdownWrites after its context is
// done.
const AbandonAfter = 2 * time.Second

// ShutdownWrites bounds each of the two groups of writes of a shutdown
// (announce and release before the jobs' grace, release and delete after
// it) when the database does not answer; with one that does they take
// milliseconds.
const ShutdownWrites = 2 * time.Second

// shutdown stops the node in this order, so that nothing it held is stuck
// and peers take over at once:
//
//  1. stop claiming (loader, recover, boss, listener exit) and mark the
//     node leaving: peers stop counting it as live but do not recover it;
//  2. release every queued claim in one statement, and give back fires
//     that were started but wait for a worker, so peers fire them on time;
//  3. let running jobs finish within ShutdownGrace, then cancel their
//     contexts and wait for them (their results are still recorded) at
//     most AbandonAfter more: a job that ignores its context is left
//     running, unrecorded, and its claim to peers' recovery (at least
//     once: they re-run the fire and mark its execution abandoned); idle
//     workers exit;
//  4. release, in one statement, every row still claimed by this node
//     (finishes that kept a claim while the node began to stop);
//  5. stop the completer and the heartbeat;
//  6. delete the node row so peers rebalance immediately.
func (n *Node) shutdown(work *sync.WaitGroup, stopBackground func()) {
	n.stopping.Store(true)
	work.Wait()
	// Announce leaving first: peers drop this node from their live view,
	// so their strategies accept the claims released next at once.
	wctx, cancel := context.WithTimeout(n.bg, ShutdownWrites)
	if err := n.heartbeat(wctx); err != nil {
		n.log.Warn().Err(err).Msg("easyjob: could not announce leaving")
	}
	n.release(wctx, "shutdown", n.claims.Drop(n.queue.Drain()...))
	cancel()
	for _, c := range n.pool.DrainWaiting() {
		n.pool.Track(func() { n.giveBack(c) }) // started, never ran: back to peers
	}

	n.stopDaemons() // daemon.go: they never end on their own
	done := make(chan struct{})
	go func() { n.pool.Wait(); close(done) }()
	grace := time.NewTimer(n.cfg.ShutdownGrace)
	stuck := false
	select {
	case <-done:
	case <-grace.C:
		n.log.Warn().Str("grace", dur(n.cfg.ShutdownGrace)).Msg("easyjob: shutdown grace over; cancelling running jobs")
		n.pool.CancelAll()
		abandon := time.NewTimer(AbandonAfter)
		select {
		case <-done:
		case <-abandon.C:
			// Still waiting: jobs that ignore their context, or results
			// the database does not take (the completer and the starter
			// retry them; workers wait on them).
			stuck = true
			if k := n.pool.Busy(); k > 0 {
				n.log.Error().Int("jobs", k).Str("waited", dur(AbandonAfter)).Msg("easyjob: jobs ignore their cancelled context; leaving them to peers' recovery")
			} else {
				n.log.Error().Str("waited", dur(AbandonAfter)).Msg("easyjob: results of finished jobs not written: the database does not answer; peers recover their tasks and re-run those fires")
			}
		}
		abandon.Stop()
	}
	grace.Stop()
	n.pool.Close()
	if !stuck {
		n.pool.WaitWorkers() // idle: they exit at once
	}
	wctx, cancel = context.WithTimeout(context.WithoutCancel(n.bg), ShutdownWrites)
	defer cancel()
	n.releaseHeld(wctx)

	stopBackground()

	if err := n.store.DeleteNode(wctx, n.id()); err != nil {
		n.log.Warn().Err(err).Msg("easyjob: could not delete node row; peers will expire it")
	}
	n.log.Info().Msg("easyjob: node stopped")
}

// releaseHeld releases the rows the database still shows claimed by this
// node once its jobs are done, all in one statement.
func (n *Node) releaseHeld(ctx context.Context) {
	rows, err := n.store.HeldBy(ctx, n.id())
	if err != nil {
		n.log.Warn().Err(err).Msg("easyjob: could not list claims at shutdown; peers recover them")
		return
	}
	var idle []repository.Task
	for _, r := range rows {
		if !n.pool.Runs(r.ID) {
			idle = append(idle, r)
		}
	}
	n.release(ctx, "shutdown", fencesOf(idle))
}
