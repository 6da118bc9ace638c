package memory

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Cancel records the request on the task if a run of it is in progress.
func (s *Store) Cancel(ctx context.Context, group, name string) (repository.Task, error) {
	if err := s.begin(ctx); err != nil {
		return repository.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.taskLocked(group, name)
	if err != nil {
		return repository.Task{}, err
	}
	running := false
	for _, id := range s.execsByTask[t.ID] {
		if s.execs[id].Status == repository.ExecRunning {
			running = true
			break
		}
	}
	if !running {
		return repository.Task{}, fmt.Errorf("easyjob/memory: cancel %q in group %q: %w", name, group, repository.ErrNotRunning)
	}
	now := s.now()
	by := ""
	if e, ok := repository.AuditFrom(ctx); ok {
		by = e.Name
	}
	if s.cancels == nil {
		s.cancels = make(map[repository.TaskID]repository.RunCancel)
	}
	s.cancels[t.ID] = repository.RunCancel{Task: name, At: now, By: by}
	s.auditLocked(ctx, group, name, now)
	return *t, nil
}

// CancelsSince lists the group's requests after since, oldest first.
func (s *Store) CancelsSince(ctx context.Context, group string, since time.Time) ([]repository.RunCancel, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []repository.RunCancel
	for id, c := range s.cancels {
		if t := s.tasks[id]; t != nil && t.Group == group && c.At.After(since) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}
