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
	refs := make([]repository.TaskRef, 0, min(room, len(due.Tasks)))
	stolen := map[repository.TaskID]bool{}
	for _, t := range due.Tasks {
		if len(refs) == room {
			break
		}
		if n.strat.Accept(live, t, n.self) {
			refs = append(refs, t.Ref())
			continue
		}
		// Steal: a due task left unclaimed past the threshold goes to any
		// live node, so differing views or a node lacking the function
		// cannot starve it.
		if due.Now.Sub(t.NextStartTime) >= n.cfg.StealAfter && containsNode(live, n.self) {
			refs = append(refs, t.Ref())
			stolen[t.ID] = true
		}
	}
	return n.claim(ctx, refs, stolen)
}

// claim claims refs in one statement and holds what it won.
func (n *node) claim(ctx context.Context, refs []repository.TaskRef, stolen map[repository.TaskID]bool) error {
	if len(refs) == 0 {
		return nil
	}
	n.claimMu.RLock()
	defer n.claimMu.RUnlock()
	won, err := n.store.Claim(ctx, n.self, refs)
	if err != nil {
		return err
	}
	n.stats.claimed.Add(int64(len(won)))
	n.stats.conflicts.Add(int64(len(refs) - len(won)))
	if n.stopping.Load() {
		n.releaseRows(ctx, won, "claimed while stopping")
		return nil
	}
	n.hold(won, stolen)
	return nil
}

func (n *node) releaseRows(ctx context.Context, rows []repository.Task, why string) {
	fences := make([]repository.Claim, len(rows))
	for i, r := range rows {
		fences[i] = r.Claim()
	}
	if _, err := n.store.Release(ctx, fences); err != nil {
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
