package instrument

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The control contract (repository.Control), but for the methods it
// shares with the runtime's (runtime.go).

func (s *store) Groups(ctx context.Context) ([]string, error) {
	return call(s, "Groups", func() ([]string, error) { return s.inner.Groups(ctx) })
}

func (s *store) History(ctx context.Context, group, name string, f repository.HistoryFilter) ([]repository.Execution, error) {
	return call(s, "History", func() ([]repository.Execution, error) { return s.inner.History(ctx, group, name, f) })
}

func (s *store) Pause(ctx context.Context, group, name string) (repository.Task, error) {
	return call(s, "Pause", func() (repository.Task, error) { return s.inner.Pause(ctx, group, name) })
}

func (s *store) Resume(ctx context.Context, group, name string) (repository.Task, error) {
	return call(s, "Resume", func() (repository.Task, error) { return s.inner.Resume(ctx, group, name) })
}

func (s *store) Trigger(ctx context.Context, group, name string) (repository.Task, error) {
	return call(s, "Trigger", func() (repository.Task, error) { return s.inner.Trigger(ctx, group, name) })
}

func (s *store) Reschedule(ctx context.Context, group, name, cron string, next time.Time) (repository.Task, error) {
	return call(s, "Reschedule", func() (repository.Task, error) { return s.inner.Reschedule(ctx, group, name, cron, next) })
}

func (s *store) TaskCounts(ctx context.Context, group string, liveWithin time.Duration) ([]repository.TaskCount, error) {
	return call(s, "TaskCounts", func() ([]repository.TaskCount, error) { return s.inner.TaskCounts(ctx, group, liveWithin) })
}

func (s *store) TaskPage(ctx context.Context, group string, q repository.TaskQuery) (repository.TaskPage, error) {
	return call(s, "TaskPage", func() (repository.TaskPage, error) { return s.inner.TaskPage(ctx, group, q) })
}

func (s *store) TaskTree(ctx context.Context, group, name string, liveWithin time.Duration) ([]repository.TaskRow, error) {
	return call(s, "TaskTree", func() ([]repository.TaskRow, error) { return s.inner.TaskTree(ctx, group, name, liveWithin) })
}

func (s *store) TaskRuns(ctx context.Context, group string, task repository.TaskID, f repository.HistoryFilter) ([]repository.Execution, error) {
	return call(s, "TaskRuns", func() ([]repository.Execution, error) { return s.inner.TaskRuns(ctx, group, task, f) })
}

func (s *store) RecentExecutions(ctx context.Context, group string, since time.Time, limit int) ([]repository.Execution, error) {
	return call(s, "RecentExecutions", func() ([]repository.Execution, error) { return s.inner.RecentExecutions(ctx, group, since, limit) })
}

func (s *store) CountFailures(ctx context.Context, group string, since time.Time) (map[repository.ExecStatus]int, error) {
	return call(s, "CountFailures", func() (map[repository.ExecStatus]int, error) { return s.inner.CountFailures(ctx, group, since) })
}
