package node

import (
	"context"
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// reconcileEvery: every this many heartbeat intervals the node compares
// the doing rows it owns in the database with the claims it holds in memory.
const reconcileEvery = 10

// heartbeat writes the node row, measures the clock offset and refreshes
// the live view. It is one step of the heartbeat loop.
func (n *Node) heartbeat(ctx context.Context) error {
	if n.hooks != nil {
		if hook := n.hooks.BeforeHeartbeat.Load(); hook != nil {
			if err := (*hook)(ctx); err != nil {
				return err
			}
		}
	}
	sent := time.Now()
	row, err := n.store.Heartbeat(ctx, repository.Node{
		ID: n.id(), Group: n.cfg.Group, Name: n.cfg.NodeName,
		Weight: n.cfg.Weight, Counts: n.counts.sum(time.Now()), Leaving: n.stopping.Load(), TaskSet: n.picker.setID,
	})
	if err != nil {
		n.seenSince.Store(0)
		n.observe(observe.Event{Kind: observe.EventHeartbeatFailed, Err: err})
		return err
	}
	n.outage.answered()
	n.offset.observe(sent, time.Now(), row.HeartbeatAt)
	if last := n.lastBeat.Load(); n.seenSince.Load() == 0 || sent.Sub(time.Unix(0, last)) > 2*n.cfg.HeartbeatInterval {
		n.seenSince.Store(sent.UnixNano())
	}
	if n.suspect() {
		// Back after a silence (a pause, a partition, a frozen process):
		// void every claim before this beat makes the node look healthy
		// again, whichever goroutine happens to run first after it.
		n.fenceSelf(ctx, "heartbeat back after a silence past the dead threshold")
		// Rows it claimed before the silence and no longer holds go back
		// to pending now, not at the next scheduled reconcile.
		n.dirty.Store(true)
		select {
		case n.reconcileNow <- struct{}{}:
		default:
		}
	}
	n.beat(sent)
	if n.hooks != nil {
		n.hooks.HeartbeatWritten.send(sent)
	}
	beat := n.beats.Add(1)
	// The live view only steers strategies (recovery reads its own), so it
	// is refreshed every other beat: well inside LiveAfter, and an idle
	// node stays under 3 queries per second. A strategy that reads counts
	// gets them every beat while tasks fire: they change every second.
	busyCounts := n.picker.readsCounts && !n.idle.Load()
	if beat%2 == 1 || busyCounts || len(n.picker.liveView()) == 0 {
		err = n.refreshLive(ctx)
	}
	if n.obs != nil {
		n.observe(observe.Event{Kind: observe.EventGauges, Held: n.claims.Len(), Busy: n.pool.Busy(), Live: len(n.picker.liveView())})
	}
	return err
}

// sawDatabaseFor reports whether this node has seen the database, beat
// after beat, for at least d. Death is judged only then: a peer's stale
// heartbeat is evidence of its death only if this node could have seen a
// fresh one. After an outage every node's heartbeat is stale, and the one
// that reconnects first must not recover the others' tasks (whose fires
// they may have run, unrecorded, during the outage) before they had the
// chance to beat again.
func (n *Node) sawDatabaseFor(d time.Duration) bool {
	since := n.seenSince.Load()
	return since != 0 && time.Since(time.Unix(0, since)) >= d
}

// watchSilence drops every claim once the node has been silent long enough
// that peers may take its tasks: queued claims are removed (and released
// where the fence still holds), running jobs' contexts are cancelled.
func (n *Node) watchSilence(ctx context.Context) {
	// One timer on the moment the node turns suspect (each beat moves it
	// on), not a periodic tick: running jobs are cancelled on that moment,
	// and a frozen process that resumes finds this timer among the first
	// expired ones.
	t := time.NewTimer(0)
	defer t.Stop()
	dropped := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		switch s := n.suspect(); {
		case s && !dropped:
			dropped = true
			n.fenceSelf(ctx, "node silent past the dead threshold")
		case !s:
			dropped = false
		}
		wait := n.cfg.HeartbeatInterval
		if at, ok := n.silentAt(); ok && !dropped {
			wait = min(wait, time.Until(at)+time.Millisecond)
		}
		t.Reset(max(wait, time.Millisecond))
	}
}

// fenceSelf voids every claim taken before now: the epoch moves on (so a
// claim of the old epoch never fires, even if a timer or worker runs
// before the drop below), queued and waiting claims are released and
// running jobs' contexts are cancelled (errSilenced: a run it cuts short
// is recorded fenced and its fire stays due, as a dead node's).
func (n *Node) fenceSelf(ctx context.Context, why string) {
	n.claims.VoidAll()
	n.log.Error().Str("dead_after", dur(n.cfg.DeadAfter)).Str("why", why).Msg("easyjob: dropping every claim: peers may have taken them")
	n.pool.CancelAllCause(errSilenced)
	idle := append(n.queue.Drain(), n.pool.DrainWaiting()...)
	rctx, cancel := context.WithTimeout(ctx, n.cfg.HeartbeatInterval)
	defer cancel()
	n.release(rctx, "silent past dead threshold", n.claims.Drop(idle...))
}

// reconcileStep is one pass of the reconcile loop (every heartbeat
// interval): it reconciles on a schedule, and at once after a
// claim-related write failed, since a reply lost with the connection can
// leave a row claimed by this node that it does not know it holds. It is
// its own loop, not part of the heartbeat: it waits for in-flight finishes
// (the claim lock), and a heartbeat must never wait for those.
func (n *Node) reconcileStep(ctx context.Context) error {
	n.reconcileTicks++
	if n.reconcileTicks%reconcileEvery != 0 && !n.dirty.Swap(false) {
		return nil
	}
	return n.reconcile(ctx)
}

// reconcile releases doing rows that name this node but that it does not
// hold in memory (a claim whose reply was lost, a run dropped while the
// database was away): a claimed task is never silently stuck.
func (n *Node) reconcile(ctx context.Context) error {
	defer n.claims.Exclusive()()
	rows, err := n.store.HeldBy(ctx, n.id())
	if err != nil {
		n.dirty.Store(true)
		return err
	}
	if stray := n.claims.Strays(rows); len(stray) > 0 {
		n.log.Warn().Int("claims", len(stray)).Msg("easyjob: releasing claims the node no longer held in memory")
		n.release(ctx, "not held in memory", stray)
		n.poke() // claim what is due among them at once (the listener may be down)
	}
	return nil
}

// errSilenced is the cause of the cancel of the jobs of a node silent
// past the dead threshold (fenceSelf). A job that returns an error after
// it ended as if its node had died: its run is recorded fenced and the
// fire stays due (RecoverRerun), so it runs again (at least once), here
// or on a peer, instead of ending failed and passing the fire (a DAG
// step's subtree with it).
var errSilenced = errors.New("its node was cut off from the database past the dead threshold")
