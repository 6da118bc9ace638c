package node

import (
	"context"
	"fmt"

	"github.com/easyjob-go/easyjob/repository"
)

// checkCollisions finds the task names this node registers that a live
// peer registers with other code (repository.Collisions): two services
// sharing a group and a task name, where each node runs only its own
// job and the other service's fires of that task never run there. Each
// collision is logged as an ERROR once when it appears; Collisions reports
// the current ones (Health, the dashboard).
func (n *Node) checkCollisions(ctx context.Context) error {
	live, err := repository.LiveTaskSets(ctx, n.store, n.cfg.Group, n.cfg.LiveAfter)
	if err != nil {
		return fmt.Errorf("easyjob: read live task sets: %w", err)
	}
	var mine []repository.Collision
	for _, c := range repository.Collisions(live) {
		if _, ok := n.specs[c.Name]; ok {
			mine = append(mine, c)
		}
	}
	before := map[string]bool{}
	if old := n.collisions.Swap(&mine); old != nil {
		for _, c := range *old {
			before[c.Name] = true
		}
	}
	for _, c := range mine {
		if !before[c.Name] {
			n.log.Error().Str("task", c.Name).Str("registered_by", c.Describe()).
				Msg("easyjob: task name collision: live nodes of this group register this task with different code (two services sharing a group and a task name, or a deploy changing it); each node runs only its own job. Give each service its own Config.Group")
		}
	}
	return nil
}

// Collisions returns the task name collisions the last check found.
func (n *Node) Collisions() []repository.Collision {
	if c := n.collisions.Load(); c != nil {
		return *c
	}
	return nil
}
