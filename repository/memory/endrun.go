package memory

import (
	"context"
	"fmt"

	"github.com/easyjob-go/easyjob/repository"
)

// EndRun records the end of a run that went on without its claim, as the
// Postgres store does: the run's row by its start key, then the task's
// last status, error and failures, and a pause when they reach PauseAfter.
func (s *Store) EndRun(ctx context.Context, r repository.RunEnd) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	f := repository.Finish{Claim: repository.Claim{ID: r.Task, NodeID: r.Node}, Run: &r.Run, Ran: r.Ran}
	x := s.appendLocked(f, r.Status, now)
	if x.Status != repository.ExecRunning && x.Status != repository.ExecAbandoned {
		return nil // ended already (a retried call)
	}
	x.Status, x.Error = r.Status, r.Error
	s.setLogLocked(x.ID, r.Log)
	x.StartedAt, x.FinishedAt = minTime(norm(r.Started), now), minTime(norm(r.Started.Add(r.Ran)), now)
	t := s.tasks[r.Task]
	if t == nil {
		return nil
	}
	t.LastStatus, t.LastError, t.LastFinishedAt = r.Status, r.Error, now
	switch r.Status {
	case repository.ExecFailed, repository.ExecTimedOut:
		t.Failures++
		if r.PauseAfter > 0 && t.Failures >= r.PauseAfter && !t.Paused {
			t.Paused = true
			if t.Status == repository.TaskPending {
				t.Status = repository.TaskPaused
				t.Version++
			}
			s.appendAuditLocked(repository.AuditEntry{
				Group: t.Group, Task: t.Name, Actor: repository.Actor{Name: fmt.Sprintf("node %d", r.Node), Via: "node"},
				Action: "pause", Detail: fmt.Sprintf("after %d failed runs in a row (the last: %s)", t.Failures, t.LastError),
			}, now)
		}
	case repository.ExecSucceeded:
		t.Failures = 0
	}
	return nil
}
