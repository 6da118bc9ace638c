package harness

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Store methods counted by countingStore, in reporting order.
const (
	mNow = iota
	mRegisterNode
	mHeartbeat
	mDeleteNode
	mLiveNodes
	mNodes
	mExpireNodes
	mUpsertTasks
	mDueTasks
	mClaim
	mRelease
	mHeldBy
	mTask
	mTasks
	mStartExecution
	mStartExecutions
	mFinish
	mHistory
	mPruneHistory
	mOrphans
	mRecoverAll
	mPause
	mResume
	mTrigger
	mReschedule
	mMarkStale
	mGroups
	mRemoveTask
	mPublishTaskSet
	mTaskSet
	mChainRun
	mTaskCounts
	mTaskPage
	mTaskTree
	mTaskRuns
	mRecentExecutions
	mCountFailures
	mListen // not a round trip per call: one long-lived session
	numMethods
)

var methodNames = [numMethods]string{
	"Now", "RegisterNode", "Heartbeat", "DeleteNode", "LiveNodes", "Nodes", "ExpireNodes",
	"UpsertTasks", "DueTasks", "Claim", "Release", "HeldBy", "Task", "Tasks",
	"StartExecution", "StartExecutions", "Finish", "History", "PruneHistory", "Orphans",
	"RecoverAll", "Pause", "Resume", "Trigger", "Reschedule", "MarkStale", "Groups", "RemoveTask",
	"PublishTaskSet", "TaskSet", "ChainRun", "TaskCounts", "TaskPage", "TaskTree", "TaskRuns",
	"RecentExecutions", "CountFailures", "Listen",
}

// storeStats is a snapshot of a countingStore (also the stats file of a
// too. It never adds I/O of its own.
//
// The embedded Store only keeps the build green when the interface grows:
// a method without an explicit (counting) override here is delegated
// uncounted, and TestCountingStoreCountsEveryMethod fails until it is added.
type countingStore struct {
	repository.Store
	inner                    repository.Store
	calls, errs              [numMethods]atomic.Int64
	claimAsked, claimWon     atomic.Int64
	finishRows, fenced, lost atomic.Int64
	startRows                atomic.Int64
	recovered                atomic.Int64
	nodeID                   atomic.Int64
}

// countingNotifier is a countingStore over a store that also notifies, so
// wrapping keeps LISTEN/NOTIFY working.
type countingNotifier struct {
	*countingStore
	n repository.Notifier
}

// Listen implements repository.Notifier.
func (c *countingNotifier) Listen(ctx context.Context, group string, wake func()) error {
	c.calls[mListen].Add(1)
	return c.done(mListen, c.n.Listen(ctx, group, wake))
}

// newCountingStore wraps s; the result implements repository.Notifier
// exactly when s does. The second result reads the counters.
func newCountingStore(s repository.Store) (repository.Store, *countingStore) {
	c := &countingStore{Store: s, inner: s}
	if n, ok := s.(repository.Notifier); ok {
		return &countingNotifier{countingStore: c, n: n}, c
	}
	return c, c
}

// snapshot reads the counters.
func (c *countingStore) snapshot() storeStats {
	s := storeStats{At: time.Now().UnixNano(), Calls: map[string]int64{}, Errors: map[string]int64{}}
	for i := range numMethods {
		if v := c.calls[i].Load(); v > 0 {
			s.Calls[methodNames[i]] = v
		}
		if v := c.errs[i].Load(); v > 0 {
			s.Errors[methodNames[i]] = v
		}
	}
	if id := c.nodeID.Load(); id != 0 {
		s.NodeIDs = []int64{id}
	}
	s.ClaimAsked, s.ClaimWon = c.claimAsked.Load(), c.claimWon.Load()
	s.FinishRows, s.FencedFinish, s.StartLost = c.finishRows.Load(), c.fenced.Load(), c.lost.Load()
	s.Recovered = c.recovered.Load()
	s.StartRows = c.startRows.Load()
	return s
}

func (c *countingStore) count(m int) { c.calls[m].Add(1) }

func (c *countingStore) done(m int, err error) error {
	if err != nil && !errors.Is(err, repository.ErrClaimLost) && !errors.Is(err, context.Canceled) {
		c.errs[m].Add(1)
	}
	return err
}

var (
	_ repository.Store    = (*countingStore)(nil)
	_ repository.Notifier = (*countingNotifier)(nil)
)
