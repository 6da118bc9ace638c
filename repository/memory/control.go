package memory

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Pause sets the paused flag; a pending task becomes paused (version+1), a
// doing one keeps its claim and parks at its finish.
func (s *Store) Pause(ctx context.Context, group, name string) (repository.Task, error) {
	return s.control(ctx, group, name, false, func(t *repository.Task, now time.Time) bool {
		changed := !t.Paused
		t.Paused = true
		if t.Status == repository.TaskPending {
			t.Status = repository.TaskPaused
			t.Version++
			changed = true
		}
		return changed
	})
}

// Resume clears the paused flag; a paused task becomes pending (version+1).
func (s *Store) Resume(ctx context.Context, group, name string) (repository.Task, error) {
	return s.control(ctx, group, name, true, func(t *repository.Task, now time.Time) bool {
		changed := t.Paused
		t.Paused = false
		if t.Status == repository.TaskPaused {
			t.Status = repository.TaskPending
			t.Version++
			changed = true
		}
		return changed
	})
}

// Trigger asks for one fire now: a doing task gets trigger_requested, any
// other becomes pending at now with attempt 1 (version+1, paused flag kept).
func (s *Store) Trigger(ctx context.Context, group, name string) (repository.Task, error) {
	return s.control(ctx, group, name, true, func(t *repository.Task, now time.Time) bool {
		if t.Status == repository.TaskDoing {
			changed := !t.TriggerRequested
			t.TriggerRequested = true
			return changed
		}
		t.Status, t.NextStartTime, t.Attempt, t.FireKind = repository.TaskPending, now, 1, repository.RunManual
		t.Version++
		return true
	})
}

// Reschedule sets cron and next_start_time (a zero next keeps it) and marks
// the task overridden (cleared when cron is the code's); a finished task
// becomes pending. A doing task is not bumped: its Finish sees the cron
// changed.
func (s *Store) Reschedule(ctx context.Context, group, name, cron string, next time.Time) (repository.Task, error) {
	return s.control(ctx, group, name, false, func(t *repository.Task, now time.Time) bool {
		t.Cron, t.OverriddenAt = cron, now
		if !next.IsZero() {
			t.NextStartTime = norm(next)
		}
		if cron == t.CodeCron {
			t.OverriddenAt = time.Time{}
		}
		switch t.Status {
		case repository.TaskDoing:
		case repository.TaskFinished:
			t.Status, t.FireKind = repository.TaskPending, ""
			t.Version++
		default:
			t.FireKind = ""
			t.Version++
		}
		return true
	})
}

// control applies one operator action to the named task under the lock,
// stamps updated_at when apply reports a change, and notifies the group
// when asked to.
func (s *Store) control(ctx context.Context, group, name string, notify bool,
	apply func(t *repository.Task, now time.Time) bool) (repository.Task, error) {
	if err := s.begin(ctx); err != nil {
		return repository.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.taskLocked(group, name)
	if err != nil {
		return repository.Task{}, err
	}
	now := s.now()
	if apply(t, now) {
		t.UpdatedAt = now
	}
	s.auditLocked(ctx, group, name, now)
	if notify {
		s.notifyLocked(group)
	}
	return *t, nil
}
