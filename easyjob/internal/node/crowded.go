package node

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// A node holding MaxClaims claims has no room for another, and a finish
// keeps its claim for the next fire: the same tasks would fire forever
// while due tasks beyond the bound never ran. When one of those waits
// past the steal threshold (and a poll, so a peer with room steals it
// first), the node is crowded: its finishes release their claims instead
// of keeping them (outcome), and the loader, which claims by due time,
// takes the most overdue first. Past the bound every task fires late,
// none never. A node with room again is no longer crowded.

// crowdedWarnEvery spaces the warnings of a node that stays crowded.
const crowdedWarnEvery = time.Minute

// checkCrowded is the loader's pass when every claim is taken: it reads
// the most overdue task this node could run and marks the node crowded
// while one waited too long.
func (n *Node) checkCrowded(ctx context.Context) error {
	due, err := n.store.DueTasks(ctx, repository.DueQuery{Group: n.cfg.Group, Handlers: n.roots, Limit: 1})
	if err != nil {
		return err
	}
	if len(due.Tasks) == 0 {
		n.crowded.Store(false)
		return nil
	}
	waited := due.Now.Sub(due.Tasks[0].DueAt())
	crowded := waited > n.cfg.StealAfter+n.cfg.PollInterval
	n.crowded.Store(crowded)
	if crowded && time.Since(n.crowdedWarned) >= crowdedWarnEvery {
		n.crowdedWarned = time.Now()
		n.log.Warn().Int("max_claims", n.cfg.MaxClaims).Str("task", due.Tasks[0].Name).Str("overdue", dur(waited)).
			Msg("easyjob: every claim taken (MaxClaims) while a due task waits; claims now rotate, so fires run late: raise Workers or MaxClaims, or add replicas")
	}
	return nil
}
