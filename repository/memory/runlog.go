package memory

import (
	"context"
	"fmt"

	"github.com/easyjob-go/easyjob/repository"
)

// setLogLocked replaces the log of execution id; "" leaves it.
func (s *Store) setLogLocked(id int64, log string) {
	if log != "" {
		s.logs[id] = log
	}
}

// WriteRunLogs replaces the logs of running executions found by their
// start key, as the Postgres store does.
func (s *Store) WriteRunLogs(ctx context.Context, logs []repository.RunLogUpdate) (int, error) {
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range logs {
		for _, id := range s.execsByTask[l.Task] {
			x := s.execs[id]
			if x.Status == repository.ExecRunning && x.NodeID == l.Node && x.ScheduledAt.Equal(norm(l.ScheduledAt)) &&
				x.Attempt == max(l.Attempt, 1) && x.Batch == l.Batch {
				s.logs[id] = l.Log
				n++
				break
			}
		}
	}
	return n, nil
}

// RunLog reads one run of a task with its log.
func (s *Store) RunLog(ctx context.Context, group, name string, id int64) (repository.RunLog, error) {
	if err := s.begin(ctx); err != nil {
		return repository.RunLog{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.anyTaskLocked(group, name)
	if err != nil {
		return repository.RunLog{}, err
	}
	x := s.execs[id]
	if x == nil || x.TaskID != t.ID {
		return repository.RunLog{}, fmt.Errorf("easyjob/memory: run %d of %q in group %q: %w", id, name, group, repository.ErrRunNotFound)
	}
	e := *x
	e.TaskName = t.Name
	return repository.RunLog{Execution: e, Log: s.logs[id]}, nil
}
