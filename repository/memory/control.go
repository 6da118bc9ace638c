package memory

import (
	"context"
	"fmt"
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
// Either way FireArgs are args, the arguments of the fire asked for.
func (s *Store) Trigger(ctx context.Context, group, name string, args string) (repository.Task, error) {
	if err := repository.CheckArgs(fmt.Sprintf("trigger %q of group %q", name, group), args); err != nil {
		return repository.Task{}, err
	}
	return s.control(ctx, group, name, true, func(t *repository.Task, now time.Time) bool {
		if t.Status == repository.TaskDoing {
			changed := !t.TriggerRequested || t.FireArgs != args
			t.TriggerRequested, t.FireArgs = true, args
			return changed
		}
		t.Status, t.NextStartTime, t.Attempt, t.FireKind = repository.TaskPending, now, 1, repository.RunManual
		t.FireArgs = args
		t.Version++
		return true
	})
}

// Backfill records a backfill of [first, to] on the task: its fire at
// first is due at once (DueAt), the row's own next fire stays.
func (s *Store) Backfill(ctx context.Context, group, name string, first, to time.Time) (repository.Task, error) {
	busy := false
	t, err := s.control(ctx, group, name, true, func(t *repository.Task, now time.Time) bool {
		if !t.BackfillNext.IsZero() {
			busy = true
			return false
		}
		t.BackfillNext, t.BackfillTo, t.BackfillAt = norm(first), norm(to), now
		if t.Status != repository.TaskDoing {
			t.Version++
		}
		return true
	})
	if err == nil && busy {
		return t, fmt.Errorf("backfill %q of group %q until %s: %w", name, group, t.BackfillTo.Format(time.RFC3339), repository.ErrBackfillInProgress)
	}
	return t, err
}

// retimeLocked gives t, re-timed by an operator, the new cron's fires: a
// row not claimed takes the first (none: keeps its own); a claimed one
// the first after its claimed fire, remembered until its finish or next
// claim (retimeSQL).
func (s *Store) retimeLocked(t *repository.Task, fires []time.Time) {
	switch {
	case t.Status == repository.TaskDoing:
		held, ok := s.heldFire[t.ID]
		if !ok {
			held = t.NextStartTime
		}
		s.heldFire[t.ID] = held
		t.NextStartTime = norm(repository.FireAfter(fires, held))
	case len(fires) > 0:
		delete(s.heldFire, t.ID)
		t.NextStartTime = norm(fires[0])
	default:
		delete(s.heldFire, t.ID)
	}
}

// Reschedule re-times the row to the first of next (retimeLocked) and marks
// the task overridden (cleared when cron is the code's), revision+1; a
// finished task becomes pending. A doing task is not bumped: its Finish
// sees the cron changed. Any other loses a triggered fire (and its
// arguments) to the cron's. The new revision is recorded (reviseLocked).
func (s *Store) Reschedule(ctx context.Context, group, name, cron string, next []time.Time) (repository.Task, error) {
	return s.control(ctx, group, name, false, func(t *repository.Task, now time.Time) bool {
		t.Cron, t.OverriddenAt = cron, now
		t.Revision++
		s.retimeLocked(t, next)
		if cron == t.CodeCron {
			t.OverriddenAt = time.Time{}
		}
		switch t.Status {
		case repository.TaskDoing:
		case repository.TaskFinished:
			t.Status, t.FireKind, t.FireArgs = repository.TaskPending, "", ""
			t.Version++
		default:
			t.FireKind, t.FireArgs = "", ""
			t.Version++
		}
		s.reviseLocked(ctx, *t, now)
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
