package easyjob

import (
	"context"
	"fmt"
	"time"
)

// housekeepInterval is how often a node prunes the history.
const housekeepInterval = time.Minute

// housekeep applies Config.HistoryMaxAge and HistoryMaxRows: it deletes
// old finished runs of the group. Only the live node with the lowest id
// does it (every node when it has no live view yet), so a big group does
// not send one delete per node per minute; running executions are never
// deleted.
func (n *node) housekeep(ctx context.Context) error {
	if n.cfg.HistoryMaxAge <= 0 && n.cfg.HistoryMaxRows <= 0 {
		return nil
	}
	if live := n.picker.liveView(); len(live) > 0 && live[0].ID != n.id() {
		return nil
	}
	k, err := n.store.PruneHistory(ctx, n.cfg.Group, max(n.cfg.HistoryMaxAge, 0), max(n.cfg.HistoryMaxRows, 0))
	if err != nil {
		return fmt.Errorf("easyjob: prune history: %w", err)
	}
	if k > 0 {
		n.log.Debug().Int("deleted", k).Msg("easyjob: pruned history")
	}
	return nil
}
