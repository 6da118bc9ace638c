package easyjob

import (
	"context"
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

// reconcileEvery: every this many heartbeat intervals the node compares
// the doing rows it owns in the database with the claims it holds in memory.
const reconcileEvery = 10

// heartbeat writes the node row, measures the clock offset and refreshes
// the live view. It is one step of the heartbeat loop.
func (n *node) heartbeat(ctx context.Context) error {
	if n.hooks != nil {
		if hook := n.hooks.beforeHeartbeat.Load(); hook != nil {
			if err := (*hook)(ctx); err != nil {
				return err
			}
		}
	}
	sent := time.Now()
	row, err := n.store.Heartbeat(ctx, repository.Node{
		ID: n.self, Group: n.cfg.Group, Name: n.cfg.NodeName,
		Weight: n.cfg.Weight, Counts: n.counts.sum(time.Now()), Leaving: n.stopping.Load(),
	})
	if err != nil {
		return err
	}
	n.offset.observe(sent, time.Now(), row.HeartbeatAt)
	if n.suspect() {
		// Back after a silence (a pause, a partition, a frozen process):
		// void every claim before this beat makes the node look healthy
		// again, whichever goroutine happens to run first after it.
		n.fenceSelf(ctx, "heartbeat back after a silence past the dead threshold")
	}
	n.lastBeat.Store(sent.UnixNano())
	beat := n.beats.Add(1)
	// The live view only steers strategies (recovery reads its own), so it
	// is refreshed every other beat: well inside LiveAfter, and an idle
	// node stays under 3 queries per second. least_count reads the peers'
	// counts from it, which change every second while tasks fire.
	busyLeast := n.cfg.Strategy == strategy.NameLeastCount && !n.idle.Load()
	if beat%2 == 1 || busyLeast || len(n.liveView()) == 0 {
		live, err := n.store.LiveNodes(ctx, n.cfg.Group, n.cfg.LiveAfter)
		if err != nil {
			return err
		}
		n.setLive(live)
	}
	return nil
}

// watchSilence drops every claim once the node has been silent long enough
// that peers may take its tasks: queued claims are removed (and released
// where the fence still holds), running jobs' contexts are cancelled.
func (n *node) watchSilence(ctx context.Context) {
	tick := time.NewTicker(max(n.cfg.HeartbeatInterval/4, 10*time.Millisecond))
	defer tick.Stop()
	dropped := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		switch s := n.suspect(); {
		case s && !dropped:
			dropped = true
			n.fenceSelf(ctx, "node silent past the dead threshold")
		case !s:
			dropped = false
		}
	}
}

// fenceSelf voids every claim taken before now: the epoch moves on (so a
// claim of the old epoch never fires, even if a timer or worker runs
// before the drop below) and every held claim is dropped.
func (n *node) fenceSelf(ctx context.Context, why string) {
	n.epoch.Add(1)
	n.log.Error().Dur("dead_after", n.cfg.DeadAfter).Str("why", why).Msg("easyjob: dropping every claim: peers may have taken them")
	n.dropAll(ctx)
}

// dropAll abandons every claim held in memory.
func (n *node) dropAll(ctx context.Context) {
	var queued []*claimed
	n.mu.Lock()
	for _, c := range n.held {
		switch c.state {
		case stateRunning:
			if c.cancel != nil {
				c.cancel()
			}
		default:
			queued = append(queued, c)
		}
	}
	n.mu.Unlock()
	for _, c := range queued {
		n.queue.remove(c)
		n.pool.unwait(c)
	}
	rctx, cancel := context.WithTimeout(ctx, n.cfg.HeartbeatInterval)
	defer cancel()
	n.release(rctx, queued, "silent past dead threshold")
}

// reconcileStep is one pass of the reconcile loop (every heartbeat
// interval): it reconciles on a schedule, and at once after a
// claim-related write failed, since a reply lost with the connection can
// leave a row claimed by this node that it does not know it holds. It is
// its own loop, not part of the heartbeat: it waits for in-flight finishes
// (the claim lock), and a heartbeat must never wait for those.
func (n *node) reconcileStep(ctx context.Context) error {
	n.reconcileTicks++
	if n.reconcileTicks%reconcileEvery != 0 && !n.dirty.Swap(false) {
		return nil
	}
	return n.reconcile(ctx)
}

// reconcile releases doing rows that name this node but that it does not
// hold in memory (a claim whose reply was lost, a run dropped while the
// database was away): a claimed task is never silently stuck.
func (n *node) reconcile(ctx context.Context) error {
	n.claimMu.Lock()
	defer n.claimMu.Unlock()
	rows, err := n.store.HeldBy(ctx, n.self)
	if err != nil {
		n.dirty.Store(true)
		return err
	}
	var stray []repository.Claim
	n.mu.Lock()
	for _, r := range rows {
		if c, ok := n.held[r.ID]; ok && c.task.Version == r.Version {
			continue
		}
		stray = append(stray, r.Claim())
	}
	n.mu.Unlock()
	if len(stray) == 0 {
		return nil
	}
	k, err := n.store.Release(ctx, stray)
	if err != nil && !errors.Is(err, repository.ErrClaimLost) {
		n.dirty.Store(true)
		return err
	}
	n.log.Warn().Int("released", k).Msg("easyjob: released claims the node no longer held in memory")
	return nil
}
