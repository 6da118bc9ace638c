package memory

import (
	"context"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// MarkStale sets StaleSince on the tasks of group named in stale (kept
// when set) and clears it on the others; versions do not change. A
// runtime schedule (Dynamic) is never marked. It returns every task of
// the group, by id.
func (s *Store) MarkStale(ctx context.Context, group string, stale []string) ([]repository.Task, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []repository.Task
	for name, id := range s.byName[group] {
		t := s.tasks[id]
		if t.Status == repository.TaskRemoved || t.Dynamic {
			continue
		}
		switch isStale := slices.Contains(stale, name); {
		case isStale && t.StaleSince.IsZero():
			t.StaleSince = now
		case !isStale:
			t.StaleSince = time.Time{}
		}
		out = append(out, *t)
	}
	sortTasks(out)
	return out, nil
}

// Groups lists the groups with tasks (not removed) or nodes, sorted.
func (s *Store) Groups(ctx context.Context) ([]string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.groupsLocked()
	slices.Sort(out)
	return slices.Compact(out), nil
}

// RemoveTask removes the task and its descendants: tombstones (status
// removed, claim cleared, version+1) for those with executions when
// o.KeepHistory, deleted with their executions otherwise.
func (s *Store) RemoveTask(ctx context.Context, group, name string, o repository.Removal) ([]repository.Task, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	subtree, err := repository.Subtree(s.tasksLocked(group), name, norm(o.StaleBefore))
	if err != nil {
		return nil, notFound(group, name)
	}
	now := s.now()
	for i, r := range subtree {
		t := s.tasks[r.ID]
		if !o.KeepHistory || len(s.execsByTask[t.ID]) == 0 {
			s.deleteTaskLocked(group, t.Name, t.ID)
			continue
		}
		t.Status, t.NodeID, t.Paused, t.TriggerRequested = repository.TaskRemoved, 0, false, false
		t.StaleSince, t.UpdatedAt = time.Time{}, now
		t.Version++
		subtree[i] = *t
	}
	if len(subtree) > 0 {
		s.auditLocked(ctx, group, name, now)
	}
	return subtree, nil
}

// deleteTaskLocked deletes a task row with its executions and revisions
// (the foreign keys' ON DELETE CASCADE); rows naming it as parent lose the link (ON
// DELETE SET NULL).
func (s *Store) deleteTaskLocked(group, name string, id repository.TaskID) {
	for _, xid := range s.execsByTask[id] {
		delete(s.execs, xid)
		delete(s.logs, xid)
	}
	delete(s.execsByTask, id)
	delete(s.revisions, id) // ON DELETE CASCADE too
	if t := s.tasks[id]; t != nil {
		s.unindexHandlerLocked(t)
	}
	delete(s.tasks, id)
	delete(s.byName[group], name)
	for _, t := range s.tasks {
		if t.ParentID == id {
			t.ParentID = 0
		}
	}
}
