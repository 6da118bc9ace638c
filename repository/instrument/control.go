package instrument

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The control contract (repository.Control), but for the methods it
// shares with the runtime's (runtime.go).

func (s *store) Groups(ctx context.Context) ([]string, error) {
	return call(ctx, s, "Groups", func(ctx context.Context) ([]string, error) { return s.inner.Groups(ctx) })
}

func (s *store) History(ctx context.Context, group, name string, f repository.HistoryFilter) ([]repository.Execution, error) {
	return call(ctx, s, "History", func(ctx context.Context) ([]repository.Execution, error) { return s.inner.History(ctx, group, name, f) })
}

func (s *store) Pause(ctx context.Context, group, name string) (repository.Task, error) {
	return call(ctx, s, "Pause", func(ctx context.Context) (repository.Task, error) { return s.inner.Pause(ctx, group, name) })
}

func (s *store) Resume(ctx context.Context, group, name string) (repository.Task, error) {
	return call(ctx, s, "Resume", func(ctx context.Context) (repository.Task, error) { return s.inner.Resume(ctx, group, name) })
}

func (s *store) Trigger(ctx context.Context, group, name string, args string) (repository.Task, error) {
	return call(ctx, s, "Trigger", func(ctx context.Context) (repository.Task, error) { return s.inner.Trigger(ctx, group, name, args) })
}

func (s *store) Backfill(ctx context.Context, group, name string, first, to time.Time) (repository.Task, error) {
	return call(ctx, s, "Backfill", func(ctx context.Context) (repository.Task, error) {
		return s.inner.Backfill(ctx, group, name, first, to)
	})
}

func (s *store) Reschedule(ctx context.Context, group, name, cron string, next []time.Time) (repository.Task, error) {
	return call(ctx, s, "Reschedule", func(ctx context.Context) (repository.Task, error) {
		return s.inner.Reschedule(ctx, group, name, cron, next)
	})
}

// CreateSchedules reports its rows: definitions asked, rows written (all
// or none).
func (s *store) CreateSchedules(ctx context.Context, group string, defs []repository.ScheduleDef) ([]repository.Task, error) {
	ctx, began, cancel := s.begin(ctx, "CreateSchedules")
	defer cancel()
	ts, err := s.inner.CreateSchedules(ctx, group, defs)
	err = bounded(ctx, err)
	s.end(Call{Op: "CreateSchedules", Began: began, Err: err, Rows: len(defs), Won: len(ts)})
	return ts, err
}

func (s *store) UpdateSchedule(ctx context.Context, group, name string, def repository.ScheduleDef) (repository.Task, error) {
	return call(ctx, s, "UpdateSchedule", func(ctx context.Context) (repository.Task, error) {
		return s.inner.UpdateSchedule(ctx, group, name, def)
	})
}

func (s *store) TaskCounts(ctx context.Context, group string, liveWithin time.Duration) ([]repository.TaskCount, error) {
	return call(ctx, s, "TaskCounts", func(ctx context.Context) ([]repository.TaskCount, error) {
		return s.inner.TaskCounts(ctx, group, liveWithin)
	})
}

func (s *store) TaskPage(ctx context.Context, group string, q repository.TaskQuery) (repository.TaskPage, error) {
	return call(ctx, s, "TaskPage", func(ctx context.Context) (repository.TaskPage, error) { return s.inner.TaskPage(ctx, group, q) })
}

func (s *store) TaskTree(ctx context.Context, group, name string, liveWithin time.Duration) ([]repository.TaskRow, error) {
	return call(ctx, s, "TaskTree", func(ctx context.Context) ([]repository.TaskRow, error) {
		return s.inner.TaskTree(ctx, group, name, liveWithin)
	})
}

func (s *store) TaskRuns(ctx context.Context, group string, task repository.TaskID, f repository.HistoryFilter) ([]repository.Execution, error) {
	return call(ctx, s, "TaskRuns", func(ctx context.Context) ([]repository.Execution, error) {
		return s.inner.TaskRuns(ctx, group, task, f)
	})
}

func (s *store) RecentExecutions(ctx context.Context, group string, since time.Time, limit int) ([]repository.Execution, error) {
	return call(ctx, s, "RecentExecutions", func(ctx context.Context) ([]repository.Execution, error) {
		return s.inner.RecentExecutions(ctx, group, since, limit)
	})
}

func (s *store) CountFailures(ctx context.Context, group string, since time.Time) (map[repository.ExecStatus]int, error) {
	return call(ctx, s, "CountFailures", func(ctx context.Context) (map[repository.ExecStatus]int, error) {
		return s.inner.CountFailures(ctx, group, since)
	})
}

func (s *store) RecordAudit(ctx context.Context, e repository.AuditEntry) error {
	_, err := call(ctx, s, "RecordAudit", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.inner.RecordAudit(ctx, e)
	})
	return err
}

func (s *store) Audit(ctx context.Context, group string, f repository.AuditFilter) ([]repository.AuditEntry, error) {
	return call(ctx, s, "Audit", func(ctx context.Context) ([]repository.AuditEntry, error) { return s.inner.Audit(ctx, group, f) })
}

func (s *store) Revisions(ctx context.Context, group, name string) ([]repository.Revision, error) {
	return call(ctx, s, "Revisions", func(ctx context.Context) ([]repository.Revision, error) {
		return s.inner.Revisions(ctx, group, name)
	})
}

func (s *store) PutCalendar(ctx context.Context, group string, c repository.Calendar) (repository.Calendar, error) {
	return call(ctx, s, "PutCalendar", func(ctx context.Context) (repository.Calendar, error) { return s.inner.PutCalendar(ctx, group, c) })
}

func (s *store) RemoveCalendar(ctx context.Context, group, name string) error {
	_, err := call(ctx, s, "RemoveCalendar", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.inner.RemoveCalendar(ctx, group, name)
	})
	return err
}

func (s *store) Cancel(ctx context.Context, group, name string) (repository.Task, error) {
	return call(ctx, s, "Cancel", func(ctx context.Context) (repository.Task, error) { return s.inner.Cancel(ctx, group, name) })
}

func (s *store) RunLog(ctx context.Context, group, name string, id int64) (repository.RunLog, error) {
	return call(ctx, s, "RunLog", func(ctx context.Context) (repository.RunLog, error) { return s.inner.RunLog(ctx, group, name, id) })
}
