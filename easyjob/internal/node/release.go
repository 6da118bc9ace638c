package node

import (
	"context"
	"errors"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"

	"github.com/easyjob-go/easyjob/repository"
)

// release puts claims back to pending, each fenced, so peers can take
// them. It is the one way this node gives up claims; a failure is not
// fatal (reconcile or recovery returns them later) but makes reconcile run
// soon. Callers forget held claims first (claim.Set.Drop).
func (n *Node) release(ctx context.Context, why string, fences []repository.Claim) {
	if len(fences) == 0 {
		return
	}
	k, err := n.store.Release(ctx, fences)
	n.stats.released.Add(int64(k))
	if err != nil && !errors.Is(err, repository.ErrClaimLost) {
		n.dirty.Store(true)
		n.log.Warn().Err(err).Int("claims", len(fences)).Str("why", why).Msg("easyjob: release failed")
		return
	}
	n.log.Debug().Int("claims", k).Str("why", why).Msg("easyjob: released claims")
}

// giveUp ends fired claim c, which must not run, before its job: its
// worker slot is freed first (the release is a write), and its row goes
// back to pending for peers.
func (n *Node) giveUp(c *claim.Claim, why string) {
	n.pool.Done(c)
	n.release(n.bg, why, n.claims.Drop(c))
}

// fencesOf returns the fences of claimed rows.
func fencesOf(rows []repository.Task) []repository.Claim {
	out := make([]repository.Claim, len(rows))
	for i, r := range rows {
		out[i] = r.Claim()
	}
	return out
}
