package memory

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/easyjob-go/easyjob/repository"
)

// UpsertTasks writes the registered forest of group atomically: it
// validates everything before it writes anything.
func (s *Store) UpsertTasks(ctx context.Context, group string, defs []repository.TaskDef) ([]repository.Task, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := s.byName[group]
	inDefs := make(map[string]bool, len(defs))
	for _, d := range defs {
		if inDefs[d.Name] {
			return nil, fmt.Errorf("easyjob: upsert tasks of group %q: task %q given twice", group, d.Name)
		}
		inDefs[d.Name] = true
	}
	for _, d := range defs {
		if t := s.tasks[stored[d.Name]]; t != nil && t.Dynamic && t.Status != repository.TaskRemoved {
			return nil, fmt.Errorf("easyjob: upsert tasks of group %q: task %q is a runtime schedule: %w",
				group, d.Name, repository.ErrTaskExists)
		}
	}
	for _, d := range defs {
		if _, ok := stored[d.Parent]; d.Parent != "" && !inDefs[d.Parent] && !ok {
			return nil, fmt.Errorf("easyjob: task %q: parent %q: %w", d.Name, d.Parent, repository.ErrTaskNotFound)
		}
	}

	now := s.now()
	if stored == nil {
		stored = make(map[string]repository.TaskID)
		s.byName[group] = stored
	}
	// Insert new names first (ids in defs order) so parents among defs resolve.
	isNew := make(map[repository.TaskID]bool)
	for _, d := range defs {
		if _, ok := stored[d.Name]; ok {
			continue
		}
		s.lastTask++
		t := &repository.Task{
			ID: s.lastTask, Group: group, Name: d.Name, Handler: d.Name, Cron: d.Cron, CodeCron: d.Cron,
			Status: repository.TaskPending, Version: 1, Revision: 1, Attempt: 1,
			NextStartTime: norm(d.NextStartTime), Options: d.Options,
			CreatedAt: now, UpdatedAt: now,
		}
		if d.Finished {
			t.Status = repository.TaskFinished
		}
		s.insertLocked(t)
		isNew[t.ID] = true
	}
	changed := len(isNew) > 0
	out := make([]repository.Task, 0, len(defs))
	for _, d := range defs {
		t := s.tasks[stored[d.Name]]
		var parent repository.TaskID
		if d.Parent != "" {
			parent = stored[d.Parent]
		}
		if isNew[t.ID] {
			t.ParentID = parent
			out = append(out, *t)
			continue
		}
		if u, write, touch := repository.ApplyTaskDef(*t, d, parent); write {
			if t.Status == repository.TaskRemoved {
				delete(s.revisions, t.ID) // revived: a new task under the old id
			}
			u.NextStartTime = norm(u.NextStartTime)
			if touch {
				u.UpdatedAt = now
			}
			s.replaceLocked(t, u)
			changed = true
		}
		out = append(out, *t)
	}
	if changed {
		s.notifyLocked(group)
	}
	return out, nil
}

// DueTasks lists the pending root tasks of q.Group whose handler is in
// q.Handlers with next_start_time <= now + q.Window, by next_start_time
// then id.
func (s *Store) DueTasks(ctx context.Context, q repository.DueQuery) (repository.Due, error) {
	if err := s.begin(ctx); err != nil {
		return repository.Due{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	horizon := now.Add(q.Window)
	byHandler := s.byHandler[q.Group]
	seen := make(map[string]bool, len(q.Handlers))
	var due []repository.Task
	for _, h := range q.Handlers {
		if seen[h] {
			continue
		}
		seen[h] = true
		for id := range byHandler[h] {
			t := s.tasks[id]
			if t.Status == repository.TaskPending && t.ParentID == 0 && !t.DueAt().After(horizon) {
				due = append(due, *t)
			}
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if a, b := due[i].DueAt(), due[j].DueAt(); !a.Equal(b) {
			return a.Before(b)
		}
		return due[i].ID < due[j].ID
	})
	if q.Limit > 0 && len(due) > q.Limit {
		due = due[:q.Limit]
	}
	return repository.Due{Now: now, Tasks: due}, nil
}

// Claim moves each ref still pending at its version to doing for node.
func (s *Store) Claim(ctx context.Context, node repository.NodeID, refs []repository.TaskRef) ([]repository.Task, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var won []repository.Task
	for _, r := range refs {
		t := s.tasks[r.ID]
		if t == nil || t.Version != r.Version || t.Status != repository.TaskPending {
			continue
		}
		t.Status, t.NodeID, t.UpdatedAt = repository.TaskDoing, node, now
		t.Version++
		delete(s.heldFire, t.ID)
		won = append(won, *t)
	}
	sortTasks(won)
	return won, nil
}

// Release puts the claims whose fence holds back to pending.
func (s *Store) Release(ctx context.Context, claims []repository.Claim) (int, error) {
	if len(claims) == 0 {
		return 0, nil
	}
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	released := 0
	groups := make(map[string]bool)
	for _, c := range claims {
		t := s.fenced(c)
		if t == nil {
			continue
		}
		t.Status, t.NodeID, t.UpdatedAt = repository.TaskPending, 0, now
		t.Version++
		released++
		groups[t.Group] = true
	}
	for g := range groups {
		s.notifyLocked(g)
	}
	return released, nil
}

// HeldBy lists the doing tasks claimed by node, by id.
func (s *Store) HeldBy(ctx context.Context, node repository.NodeID) ([]repository.Task, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var held []repository.Task
	for _, t := range s.tasks {
		if t.Status == repository.TaskDoing && t.NodeID == node {
			held = append(held, *t)
		}
	}
	sortTasks(held)
	return held, nil
}

// Task reads one task by name.
func (s *Store) Task(ctx context.Context, group, name string) (repository.Task, error) {
	if err := s.begin(ctx); err != nil {
		return repository.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.taskLocked(group, name)
	if err != nil {
		return repository.Task{}, err
	}
	return *t, nil
}

// Tasks lists every task of group (not the removed ones), by id.
func (s *Store) Tasks(ctx context.Context, group string) ([]repository.Task, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tasksLocked(group), nil
}

// RegisteredTasks lists the tasks of group registered in code, by id.
func (s *Store) RegisteredTasks(ctx context.Context, group string) ([]repository.Task, error) {
	ts, err := s.Tasks(ctx, group)
	return slices.DeleteFunc(ts, func(t repository.Task) bool { return t.Dynamic }), err
}

// tasksLocked copies the tasks of group (not the removed ones), by id.
func (s *Store) tasksLocked(group string) []repository.Task {
	var out []repository.Task
	for _, id := range s.byName[group] {
		if t := s.tasks[id]; t.Status != repository.TaskRemoved {
			out = append(out, *t)
		}
	}
	sortTasks(out)
	return out
}

// taskLocked finds a task by name (not a removed one) or returns a
// wrapped ErrTaskNotFound.
func (s *Store) taskLocked(group, name string) (*repository.Task, error) {
	t, err := s.anyTaskLocked(group, name)
	if err == nil && t.Status == repository.TaskRemoved {
		return nil, notFound(group, name)
	}
	return t, err
}

// anyTaskLocked finds a task row by name, a removed one (a tombstone) too.
func (s *Store) anyTaskLocked(group, name string) (*repository.Task, error) {
	id, ok := s.byName[group][name]
	if !ok {
		return nil, notFound(group, name)
	}
	return s.tasks[id], nil
}

// insertLocked adds the new row t to the store and its indexes.
func (s *Store) insertLocked(t *repository.Task) {
	s.tasks[t.ID] = t
	if s.byName[t.Group] == nil {
		s.byName[t.Group] = make(map[string]repository.TaskID)
	}
	s.byName[t.Group][t.Name] = t.ID
	s.indexHandlerLocked(t)
}

// replaceLocked writes u over the stored row t, keeping the handler index
// (DueTasks) in step when the handler changes.
func (s *Store) replaceLocked(t *repository.Task, u repository.Task) {
	if u.Handler != t.Handler {
		s.unindexHandlerLocked(t)
		*t = u
		s.indexHandlerLocked(t)
		return
	}
	*t = u
}

func (s *Store) indexHandlerLocked(t *repository.Task) {
	g := s.byHandler[t.Group]
	if g == nil {
		g = make(map[string]map[repository.TaskID]bool)
		s.byHandler[t.Group] = g
	}
	if g[t.Handler] == nil {
		g[t.Handler] = make(map[repository.TaskID]bool)
	}
	g[t.Handler][t.ID] = true
}

func (s *Store) unindexHandlerLocked(t *repository.Task) {
	g := s.byHandler[t.Group]
	delete(g[t.Handler], t.ID)
	if len(g[t.Handler]) == 0 {
		delete(g, t.Handler)
	}
	if len(g) == 0 {
		delete(s.byHandler, t.Group)
	}
}

func notFound(group, name string) error {
	return fmt.Errorf("easyjob: task %q of group %q: %w", name, group, repository.ErrTaskNotFound)
}

// fenced returns the row c still holds (id, version, node, status doing), or nil.
func (s *Store) fenced(c repository.Claim) *repository.Task {
	t := s.tasks[c.ID]
	if t == nil || t.Version != c.Version || t.NodeID != c.NodeID || t.Status != repository.TaskDoing {
		return nil
	}
	return t
}

func sortTasks(ts []repository.Task) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].ID < ts[j].ID })
}
