package harness

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The repository.ViewStore methods of countingStore (the dashboard's
// reads; nodes never call them).

func (c *countingStore) TaskCounts(ctx context.Context, group string, liveWithin time.Duration) ([]repository.TaskCount, error) {
	c.count(mTaskCounts)
	r, err := c.inner.TaskCounts(ctx, group, liveWithin)
	return r, c.done(mTaskCounts, err)
}

func (c *countingStore) TaskPage(ctx context.Context, group string, q repository.TaskQuery) (repository.TaskPage, error) {
	c.count(mTaskPage)
	r, err := c.inner.TaskPage(ctx, group, q)
	return r, c.done(mTaskPage, err)
}

func (c *countingStore) TaskTree(ctx context.Context, group, name string, liveWithin time.Duration) ([]repository.TaskRow, error) {
	c.count(mTaskTree)
	r, err := c.inner.TaskTree(ctx, group, name, liveWithin)
	return r, c.done(mTaskTree, err)
}

func (c *countingStore) TaskRuns(ctx context.Context, group string, task repository.TaskID, f repository.HistoryFilter) ([]repository.Execution, error) {
	c.count(mTaskRuns)
	r, err := c.inner.TaskRuns(ctx, group, task, f)
	return r, c.done(mTaskRuns, err)
}

func (c *countingStore) RecentExecutions(ctx context.Context, group string, since time.Time, limit int) ([]repository.Execution, error) {
	c.count(mRecentExecutions)
	r, err := c.inner.RecentExecutions(ctx, group, since, limit)
	return r, c.done(mRecentExecutions, err)
}

func (c *countingStore) CountFailures(ctx context.Context, group string, since time.Time) (map[repository.ExecStatus]int, error) {
	c.count(mCountFailures)
	r, err := c.inner.CountFailures(ctx, group, since)
	return r, c.done(mCountFailures, err)
}
