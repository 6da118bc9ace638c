package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// housekeepInterval is how often a node prunes the history and stale tasks.
const housekeepInterval = time.Minute

// housekeepEvery is housekeepInterval once the node has heartbeated, and
// a heartbeat interval before: the first pass (a collision found at
// start-up) must not wait a minute because it came before the first beat.
func (n *Node) housekeepEvery() time.Duration {
	if n.beats.Load() == 0 {
		return n.cfg.HeartbeatInterval
	}
	return housekeepInterval
}

// housekeep checks for task name collisions (every node), then applies
// Config.HistoryMaxAge and HistoryMaxRows (it deletes old finished runs of
// the group) and Config.StaleTaskExpiry. Only the live node with the
// lowest id does the latter (every node when it has no live
// view yet), so a big group does not send one delete per node per minute;
// running executions are never deleted.
func (n *Node) housekeep(ctx context.Context) error {
	if n.beats.Load() == 0 {
		return nil // its task set is published with its first heartbeat: nothing to compare yet
	}
	if err := n.checkCollisions(ctx); err != nil {
		return err
	}
	history := n.cfg.HistoryMaxAge > 0 || n.cfg.HistoryMaxRows > 0
	if !history && n.cfg.StaleTaskExpiry <= 0 {
		return nil
	}
	if live := n.picker.liveView(); len(live) > 0 && live[0].ID != n.id() {
		return nil
	}
	if n.cfg.StaleTaskExpiry > 0 {
		if err := n.pruneStale(ctx); err != nil {
			return err
		}
	}
	if !history {
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

// pruneStale records which tasks no live node registers (MarkStale) and
// removes, history kept, those stale for StaleTaskExpiry. The removal is
// conditional in the store: a node that registered a task meanwhile
// cleared its mark, so it stays.
func (n *Node) pruneStale(ctx context.Context) error {
	own := make([]string, 0, len(n.specs))
	for name := range n.specs {
		own = append(own, name)
	}
	stale, err := repository.StaleTest(ctx, n.store, n.cfg.Group, n.cfg.LiveAfter, own)
	if err != nil {
		return fmt.Errorf("easyjob: find stale tasks: %w", err)
	}
	ts, err := n.store.RegisteredTasks(ctx, n.cfg.Group)
	if err != nil {
		return fmt.Errorf("easyjob: find stale tasks: %w", err)
	}
	var names []string
	for _, t := range ts {
		if stale(t.Name) {
			names = append(names, t.Name)
		}
	}
	if ts, err = n.store.MarkStale(ctx, n.cfg.Group, names); err != nil {
		return fmt.Errorf("easyjob: mark stale tasks: %w", err)
	}
	cutoff := n.dbNow().Add(-n.cfg.StaleTaskExpiry)
	for _, t := range ts {
		if t.StaleSince.IsZero() || t.StaleSince.After(cutoff) {
			continue
		}
		audit := repository.WithAudit(ctx, repository.AuditEntry{
			Actor:  repository.Actor{Name: fmt.Sprintf("node %d (%s)", n.id(), n.cfg.NodeName), Via: "node"},
			Action: "remove",
			Detail: fmt.Sprintf("stale since %s: no live node registered it for StaleTaskExpiry (%v); history kept",
				t.StaleSince.UTC().Format(time.RFC3339), n.cfg.StaleTaskExpiry),
		})
		removed, err := n.store.RemoveTask(audit, n.cfg.Group, t.Name, repository.Removal{KeepHistory: true, StaleBefore: cutoff})
		if err != nil && !errors.Is(err, repository.ErrTaskNotFound) { // a child removed with its parent
			return fmt.Errorf("easyjob: remove stale task %q: %w", t.Name, err)
		}
		for _, r := range removed {
			n.log.Info().Str("task", r.Name).Time("stale_since", t.StaleSince).Msg("easyjob: removed a stale task")
			n.observe(observe.Event{Kind: observe.EventTaskRemoved, Task: r.Name})
		}
	}
	return nil
}
