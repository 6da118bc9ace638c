package memory

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// ChainRun returns the newest execution of task at scheduled that ended,
// else the newest running one, and every execution under it, oldest first.
func (s *Store) ChainRun(ctx context.Context, task repository.TaskID, scheduled time.Time) ([]repository.Execution, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	scheduled = norm(scheduled)
	s.mu.Lock()
	defer s.mu.Unlock()
	// The newest run of the fire that ended, else the newest running one
	// (the run asking may have its own start record already).
	var root, running *repository.Execution
	ids := s.execsByTask[task]
	for i := len(ids) - 1; i >= 0 && root == nil; i-- {
		if x := s.execs[ids[i]]; x.ScheduledAt.Equal(scheduled) {
			if x.Status != repository.ExecRunning {
				root = x
			} else if running == nil {
				running = x
			}
		}
	}
	if root == nil {
		root = running
	}
	if root == nil {
		return nil, nil
	}
	under := map[int64]bool{root.ID: true}
	out := []repository.Execution{s.named(root)}
	// Executions ids grow with time, so a child always comes after its parent.
	for id := root.ID + 1; id <= s.lastExec; id++ {
		if x := s.execs[id]; x != nil && under[x.ParentExecutionID] {
			under[x.ID] = true
			out = append(out, s.named(x))
		}
	}
	return out, nil
}

// named copies x with its task's name.
func (s *Store) named(x *repository.Execution) repository.Execution {
	e := *x
	if t := s.tasks[x.TaskID]; t != nil {
		e.TaskName = t.Name
	}
	return e
}
