package easyjob

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// load is one loader pass: read the due root tasks this node has functions
// for, keep those the strategy accepts, claim them in one statement and
// queue the ones won.
func (n *node) load(ctx context.Context) error {
	if n.stopping.Load() || n.suspect() {
		return nil
	}
	room := n.cfg.MaxClaims - n.heldCount()
	if room <= 0 || len(n.roots) == 0 {
		return nil
	}
	live := n.liveView()
	if !containsNode(live, n.self) {
		// No heartbeat view yet (or it is stale): read it now.
		var err error
		if live, err = n.store.LiveNodes(ctx, n.cfg.Group, n.cfg.LiveAfter); err != nil {
			return err
		}
		n.setLive(live)
	}
	// Ask for more rows than room: the strategy keeps about 1/len(live).
	limit := room * max(1, len(live))
	sent := time.Now()
	due, err := n.store.DueTasks(ctx, repository.DueQuery{
		Group: n.cfg.Group, Names: n.roots, Window: n.cfg.FetchWindow, Limit: limit,
	})
	if err != nil {
		return err
	}
	n.offset.observe(sent, time.Now(), due.Now)
	n.idle.Store(len(due.Tasks) == 0)
	refs, rejected := n.pick(live, due, room)
	if rejected {
		// Imminent tasks the strategy gives to others: a peer may have just
		// left (its claims released with a notification). Judge them on a
		// fresh live view rather than wait for the next heartbeat's.
		fresh, err := n.store.LiveNodes(ctx, n.cfg.Group, n.cfg.LiveAfter)
		if err != nil {
			return err
		}
		n.setLive(fresh)
		refs, _ = n.pick(fresh, due, room)
	}
	return n.claim(ctx, refs)
}

// pick keeps the due tasks this node claims: those its strategy accepts on
// live, and those left unclaimed past the steal threshold, so differing
// views or a node lacking the function cannot starve a task. rejected
// reports tasks left for others that fire within a poll interval.
func (n *node) pick(live []repository.Node, due repository.Due, room int) (refs []repository.TaskRef, rejected bool) {
	view := n.strategyView(live)
	for _, t := range due.Tasks {
		if len(refs) == room {
			break
		}
		switch {
		case n.strat.Accept(view, t, n.self):
			refs = append(refs, t.Ref())
		case due.Now.Sub(t.NextStartTime) >= n.cfg.StealAfter && containsNode(live, n.self):
			refs = append(refs, t.Ref())
		default:
			rejected = rejected || t.NextStartTime.Sub(due.Now) < n.cfg.PollInterval
		}
	}
	return refs, rejected
}

// loadEvery is the loader's wait after a pass. When nothing at all was due
// within the fetch window, the next pass can wait until just before the
// window could miss a fire (wake-ups still come at once by notification):
// an idle node costs a fraction of a query per second.
func (n *node) loadEvery() time.Duration {
	if n.idle.Load() {
		return max(n.cfg.PollInterval, n.cfg.FetchWindow-n.cfg.PollInterval)
	}
	return n.cfg.PollInterval
}

// claim claims refs in one statement and holds what it won.
func (n *node) claim(ctx context.Context, refs []repository.TaskRef) error {
	if len(refs) == 0 {
		return nil
	}
	n.claimMu.RLock()
	defer n.claimMu.RUnlock()
	won, err := n.store.Claim(ctx, n.self, refs)
	if err != nil {
		n.dirty.Store(true)
		return err
	}
	n.stats.claimed.Add(int64(len(won)))
	n.stats.conflicts.Add(int64(len(refs) - len(won)))
	if n.stopping.Load() {
		n.releaseRows(ctx, won, "claimed while stopping")
		return nil
	}
	n.hold(won)
	return nil
}

func (n *node) releaseRows(ctx context.Context, rows []repository.Task, why string) {
	fences := make([]repository.Claim, len(rows))
	for i, r := range rows {
		fences[i] = r.Claim()
	}
	k, err := n.store.Release(ctx, fences)
	n.stats.released.Add(int64(k))
	if err != nil {
		n.log.Warn().Err(err).Str("why", why).Msg("easyjob: release failed")
	}
}

func containsNode(live []repository.Node, id repository.NodeID) bool {
	for _, nd := range live {
		if nd.ID == id {
			return true
		}
	}
	return false
}
