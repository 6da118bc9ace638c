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
		fire, attempt, batch, kind := t.NextStartTime, max(t.Attempt, 1), int64(0), repository.RunKind("")
		if t.RunsBackfill() { // the claim ran the backfill's fire (claim.New)
			fire, attempt, batch, kind = t.BackfillNext, 1, t.BackfillAt.UnixMicro(), repository.RunBackfill
		}
		t.Status, t.NodeID, t.UpdatedAt = repository.TaskPending, 0, now
		t.Version++
		if !r.Next.IsZero() {
			t.NextStartTime = norm(r.Next)
		}
		msg := fmt.Sprintf("node %d died", r.DeadNode)
		seen := false // the dead node has a row for the fire it held
		for _, xid := range s.execsByTask[t.ID] {
			x := s.execs[xid]
			if x.NodeID != r.DeadNode {
				continue
			}
			seen = seen || (x.ScheduledAt.Equal(fire) && x.Attempt == attempt && x.Batch == batch && x.Status != repository.ExecFenced)
			if x.Status == repository.ExecRunning {
				x.Status, x.FinishedAt, x.Error = repository.ExecAbandoned, now, msg
				t.LastStatus, t.LastError = repository.ExecAbandoned, msg
			}
		}
		// A fire due while the node still heartbeated may have run without
		// a start record (short runs are recorded at their finish).
		if n, ok := s.nodes[r.DeadNode]; ok && !fire.Add(r.Delay).After(n.HeartbeatAt) {
			t.LastStatus, t.LastError = repository.ExecAbandoned, msg
			if !seen {
				s.lastExec++
				s.execs[s.lastExec] = &repository.Execution{
					ID: s.lastExec, TaskID: t.ID, NodeID: r.DeadNode, ScheduledAt: fire, StartedAt: now, FinishedAt: now,
					Status: repository.ExecAbandoned, Error: msg, Attempt: attempt, Batch: batch, Kind: kind,
				}
				if kind == "" {
					s.execs[s.lastExec].Kind = repository.KindOf(repository.Task{ParentID: t.ParentID, FireKind: t.FireKind, Attempt: attempt}, "")
				}
				s.execsByTask[t.ID] = append(s.execsByTask[t.ID], s.lastExec)
			}
		}
		s.notifyLocked(t.Group)
	}
	return errs, nil
}
