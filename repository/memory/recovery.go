package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Orphans lists the doing tasks of group whose node has no row or has not
// heartbeated since now - deadAfter, by task id.
func (s *Store) Orphans(ctx context.Context, group string, deadAfter time.Duration) ([]repository.Orphan, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cutoff := s.now().Add(-deadAfter)
	var doing []repository.Task
	for _, id := range s.byName[group] {
		if t := s.tasks[id]; t.Status == repository.TaskDoing {
			if n := s.nodes[t.NodeID]; n == nil || n.HeartbeatAt.Before(cutoff) {
				doing = append(doing, *t)
			}
		}
	}
	sortTasks(doing)
	out := make([]repository.Orphan, len(doing))
	for i, t := range doing {
		out[i] = repository.Orphan{Task: t, DeadNode: t.NodeID}
	}
	return out, nil
}

// RecoverAll recovers each orphan under one lock, as one statement would.
func (s *Store) RecoverAll(ctx context.Context, rs []repository.Recovery) ([]error, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	errs := make([]error, len(rs))
	for i, r := range rs {
		t := s.fenced(repository.Claim{ID: r.Ref.ID, Version: r.Ref.Version, NodeID: r.DeadNode})
		if t == nil {
			errs[i] = fmt.Errorf("easyjob: recover task %d at version %d from node %d: %w",
				r.Ref.ID, r.Ref.Version, r.DeadNode, repository.ErrClaimLost)
			continue
		}
		t.Status, t.NodeID, t.UpdatedAt = repository.TaskPending, 0, now
		t.Version++
		if !r.Next.IsZero() {
			t.NextStartTime = norm(r.Next)
		}
		for _, xid := range s.execsByTask[t.ID] {
			if x := s.execs[xid]; x.NodeID == r.DeadNode && x.Status == repository.ExecRunning {
				x.Status, x.FinishedAt = repository.ExecAbandoned, now
				x.Error = fmt.Sprintf("node %d died", r.DeadNode)
				t.LastStatus, t.LastError = repository.ExecAbandoned, x.Error
			}
		}
		s.notifyLocked(t.Group)
	}
	return errs, nil
}
