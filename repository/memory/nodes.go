package memory

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// RegisterNode inserts a node row with the next id; started_at and
// heartbeat_at are the store's now.
func (s *Store) RegisterNode(ctx context.Context, group, name string, weight int) (repository.Node, error) {
	if err := s.begin(ctx); err != nil {
		return repository.Node{}, err
	}
	if weight < 1 {
		return repository.Node{}, fmt.Errorf("easyjob: register node %q: weight %d < 1", name, weight)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.lastNode++
	n := &repository.Node{ID: s.lastNode, Group: group, Name: name, Weight: weight, StartedAt: now, HeartbeatAt: now}
	s.nodes[n.ID] = n
	return *n, nil
}

// Heartbeat upserts n by id with heartbeat_at = now; a missing row is
// re-created under the same id.
func (s *Store) Heartbeat(ctx context.Context, n repository.Node) (repository.Node, error) {
	if err := s.begin(ctx); err != nil {
		return repository.Node{}, err
	}
	if n.ID <= 0 {
		return repository.Node{}, fmt.Errorf("easyjob: heartbeat of node id %d: %w", n.ID, repository.ErrNodeNotFound)
	}
	if n.Weight < 1 {
		return repository.Node{}, fmt.Errorf("easyjob: heartbeat of node %d: weight %d < 1", n.ID, n.Weight)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	row := s.nodes[n.ID]
	if row == nil {
		row = &repository.Node{ID: n.ID, StartedAt: norm(n.StartedAt)}
		if row.StartedAt.IsZero() {
			row.StartedAt = now
		}
		s.nodes[n.ID] = row
		if n.ID > s.lastNode { // keep "larger than every earlier id" for later registrations
			s.lastNode = n.ID
		}
	}
	row.Group, row.Name, row.Weight, row.Counts, row.HeartbeatAt, row.Leaving, row.TaskSet = n.Group, n.Name, n.Weight, n.Counts, now, n.Leaving, n.TaskSet
	return *row, nil
}

// DeleteNode removes the row; an absent row is not an error.
func (s *Store) DeleteNode(ctx context.Context, id repository.NodeID) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes, id)
	return nil
}

// LiveNodes lists the nodes of group with heartbeat_at >= now - within, by id.
func (s *Store) LiveNodes(ctx context.Context, group string, within time.Duration) ([]repository.Node, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cutoff := s.now().Add(-within)
	return s.nodesLocked(group, func(n *repository.Node) bool { return !n.HeartbeatAt.Before(cutoff) && !n.Leaving }), nil
}

// Nodes lists every node row of group, by id.
func (s *Store) Nodes(ctx context.Context, group string) ([]repository.Node, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodesLocked(group, func(*repository.Node) bool { return true }), nil
}

// ExpireNodes deletes the rows of group with heartbeat_at < now - deadFor
// that no doing task names.
func (s *Store) ExpireNodes(ctx context.Context, group string, deadFor time.Duration) (int, error) {
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cutoff := s.now().Add(-deadFor)
	holding := make(map[repository.NodeID]bool)
	for _, t := range s.tasks {
		if t.Status == repository.TaskDoing {
			holding[t.NodeID] = true
		}
	}
	deleted := 0
	for _, n := range s.nodesLocked(group, func(n *repository.Node) bool { return n.HeartbeatAt.Before(cutoff) }) {
		if !holding[n.ID] {
			delete(s.nodes, n.ID)
			deleted++
		}
	}
	return deleted, nil
}

// nodesLocked copies the nodes of group that keep selects, sorted by id.
func (s *Store) nodesLocked(group string, keep func(*repository.Node) bool) []repository.Node {
	var out []repository.Node
	for _, n := range s.nodes {
		if n.Group == group && keep(n) {
			out = append(out, *n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// PublishTaskSet stores names under their set id (idempotent).
func (s *Store) PublishTaskSet(ctx context.Context, names []string) (string, error) {
	if err := s.begin(ctx); err != nil {
		return "", err
	}
	id := repository.TaskSetID(names)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.taskSets[id]; !ok {
		s.taskSets[id] = slices.Compact(slices.Sorted(slices.Values(names)))
	}
	return id, nil
}

// TaskSet returns the names published under id.
func (s *Store) TaskSet(ctx context.Context, id string) ([]string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names, ok := s.taskSets[id]
	if !ok {
		return nil, fmt.Errorf("easyjob: task set %q: %w", id, repository.ErrTaskSetNotFound)
	}
	return slices.Clone(names), nil
}
