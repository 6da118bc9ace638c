package harness

import (
	"context"
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The repository.Store methods of countingStore: each counts the call and
// its error, delegates, and counts what a method adds (claims asked and
// won, starts and finishes fenced, recoveries).

func (c *countingStore) Now(ctx context.Context) (time.Time, error) {
	c.count(mNow)
	t, err := c.inner.Now(ctx)
	return t, c.done(mNow, err)
}

func (c *countingStore) RegisterNode(ctx context.Context, group, name string, weight int) (repository.Node, error) {
	c.count(mRegisterNode)
	n, err := c.inner.RegisterNode(ctx, group, name, weight)
	if err == nil {
		c.nodeID.Store(int64(n.ID))
	}
	return n, c.done(mRegisterNode, err)
}

func (c *countingStore) Heartbeat(ctx context.Context, n repository.Node) (repository.Node, error) {
	c.count(mHeartbeat)
	r, err := c.inner.Heartbeat(ctx, n)
	return r, c.done(mHeartbeat, err)
}

func (c *countingStore) DeleteNode(ctx context.Context, id repository.NodeID) error {
	c.count(mDeleteNode)
	return c.done(mDeleteNode, c.inner.DeleteNode(ctx, id))
}

func (c *countingStore) LiveNodes(ctx context.Context, group string, within time.Duration) ([]repository.Node, error) {
	c.count(mLiveNodes)
	r, err := c.inner.LiveNodes(ctx, group, within)
	return r, c.done(mLiveNodes, err)
}

func (c *countingStore) Nodes(ctx context.Context, group string) ([]repository.Node, error) {
	c.count(mNodes)
	r, err := c.inner.Nodes(ctx, group)
	return r, c.done(mNodes, err)
}

func (c *countingStore) ExpireNodes(ctx context.Context, group string, deadFor time.Duration) (int, error) {
	c.count(mExpireNodes)
	r, err := c.inner.ExpireNodes(ctx, group, deadFor)
	return r, c.done(mExpireNodes, err)
}

func (c *countingStore) UpsertTasks(ctx context.Context, group string, defs []repository.TaskDef) ([]repository.Task, error) {
	c.count(mUpsertTasks)
	r, err := c.inner.UpsertTasks(ctx, group, defs)
	return r, c.done(mUpsertTasks, err)
}

func (c *countingStore) DueTasks(ctx context.Context, q repository.DueQuery) (repository.Due, error) {
	c.count(mDueTasks)
	r, err := c.inner.DueTasks(ctx, q)
	return r, c.done(mDueTasks, err)
}

func (c *countingStore) Claim(ctx context.Context, node repository.NodeID, refs []repository.TaskRef) ([]repository.Task, error) {
	c.count(mClaim)
	r, err := c.inner.Claim(ctx, node, refs)
	if err == nil {
		c.claimAsked.Add(int64(len(refs)))
		c.claimWon.Add(int64(len(r)))
	}
	return r, c.done(mClaim, err)
}

func (c *countingStore) Release(ctx context.Context, claims []repository.Claim) (int, error) {
	c.count(mRelease)
	r, err := c.inner.Release(ctx, claims)
	return r, c.done(mRelease, err)
}

func (c *countingStore) HeldBy(ctx context.Context, node repository.NodeID) ([]repository.Task, error) {
	c.count(mHeldBy)
	r, err := c.inner.HeldBy(ctx, node)
	return r, c.done(mHeldBy, err)
}

func (c *countingStore) Task(ctx context.Context, group, name string) (repository.Task, error) {
	c.count(mTask)
	r, err := c.inner.Task(ctx, group, name)
	return r, c.done(mTask, err)
}

func (c *countingStore) Tasks(ctx context.Context, group string) ([]repository.Task, error) {
	c.count(mTasks)
	r, err := c.inner.Tasks(ctx, group)
	return r, c.done(mTasks, err)
}

func (c *countingStore) StartExecution(ctx context.Context, cl repository.Claim, e repository.Execution) (repository.Execution, error) {
	c.count(mStartExecution)
	r, err := c.inner.StartExecution(ctx, cl, e)
	if errors.Is(err, repository.ErrClaimLost) {
		c.lost.Add(1)
	}
	return r, c.done(mStartExecution, err)
}

func (c *countingStore) StartExecutions(ctx context.Context, reqs []repository.ExecStart) ([]repository.StartResult, error) {
	c.count(mStartExecutions)
	r, err := c.inner.StartExecutions(ctx, reqs)
	if err == nil {
		c.startRows.Add(int64(len(reqs)))
		for _, res := range r {
			if errors.Is(res.Err, repository.ErrClaimLost) {
				c.lost.Add(1)
			}
		}
	}
	return r, c.done(mStartExecutions, err)
}

func (c *countingStore) Finish(ctx context.Context, fs []repository.Finish) ([]repository.FinishResult, error) {
	c.count(mFinish)
	r, err := c.inner.Finish(ctx, fs)
	if err == nil {
		c.finishRows.Add(int64(len(fs)))
		for _, res := range r {
			if errors.Is(res.Err, repository.ErrClaimLost) {
				c.fenced.Add(1)
			}
		}
	}
	return r, c.done(mFinish, err)
}

func (c *countingStore) History(ctx context.Context, group, name string, f repository.HistoryFilter) ([]repository.Execution, error) {
	c.count(mHistory)
	r, err := c.inner.History(ctx, group, name, f)
	return r, c.done(mHistory, err)
}

func (c *countingStore) PruneHistory(ctx context.Context, group string, maxAge time.Duration, maxRows int) (int, error) {
	c.count(mPruneHistory)
	r, err := c.inner.PruneHistory(ctx, group, maxAge, maxRows)
	return r, c.done(mPruneHistory, err)
}

func (c *countingStore) Orphans(ctx context.Context, group string, deadAfter time.Duration) ([]repository.Orphan, error) {
	c.count(mOrphans)
	r, err := c.inner.Orphans(ctx, group, deadAfter)
	return r, c.done(mOrphans, err)
}

func (c *countingStore) RecoverAll(ctx context.Context, rs []repository.Recovery) ([]error, error) {
	c.count(mRecoverAll)
	errs, err := c.inner.RecoverAll(ctx, rs)
	for _, e := range errs {
		if e == nil {
			c.recovered.Add(1)
		}
	}
	return errs, c.done(mRecoverAll, err)
}

func (c *countingStore) Pause(ctx context.Context, group, name string) (repository.Task, error) {
	c.count(mPause)
	r, err := c.inner.Pause(ctx, group, name)
	return r, c.done(mPause, err)
}

func (c *countingStore) Resume(ctx context.Context, group, name string) (repository.Task, error) {
	c.count(mResume)
	r, err := c.inner.Resume(ctx, group, name)
	return r, c.done(mResume, err)
}

func (c *countingStore) Trigger(ctx context.Context, group, name string) (repository.Task, error) {
	c.count(mTrigger)
	r, err := c.inner.Trigger(ctx, group, name)
	return r, c.done(mTrigger, err)
}

func (c *countingStore) Reschedule(ctx context.Context, group, name, cron string, next time.Time) (repository.Task, error) {
	c.count(mReschedule)
	r, err := c.inner.Reschedule(ctx, group, name, cron, next)
	return r, c.done(mReschedule, err)
}

func (c *countingStore) MarkStale(ctx context.Context, group string, stale []string) ([]repository.Task, error) {
	c.count(mMarkStale)
	r, err := c.inner.MarkStale(ctx, group, stale)
	return r, c.done(mMarkStale, err)
}

func (c *countingStore) Groups(ctx context.Context) ([]string, error) {
	c.count(mGroups)
	r, err := c.inner.Groups(ctx)
	return r, c.done(mGroups, err)
}

func (c *countingStore) RemoveTask(ctx context.Context, group, name string, o repository.RemoveOptions) ([]repository.Task, error) {
	c.count(mRemoveTask)
	r, err := c.inner.RemoveTask(ctx, group, name, o)
	return r, c.done(mRemoveTask, err)
}

// Close is not counted (no round trip).
func (c *countingStore) Close() error { return c.inner.Close() }

func (c *countingStore) PublishTaskSet(ctx context.Context, names []string) (string, error) {
	c.count(mPublishTaskSet)
	r, err := c.inner.PublishTaskSet(ctx, names)
	return r, c.done(mPublishTaskSet, err)
}

func (c *countingStore) TaskSet(ctx context.Context, id string) ([]string, error) {
	c.count(mTaskSet)
	r, err := c.inner.TaskSet(ctx, id)
	return r, c.done(mTaskSet, err)
}

func (c *countingStore) ChainRun(ctx context.Context, task repository.TaskID, scheduled time.Time) ([]repository.Execution, error) {
	c.count(mChainRun)
	r, err := c.inner.ChainRun(ctx, task, scheduled)
	return r, c.done(mChainRun, err)
}
