package harness

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/instrument"
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
	mRegisteredTasks
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
	mRecordAudit
	mAudit
	mCreateSchedules
	mUpdateSchedule
	mPublishHandlers
	mHandlers
	mRevisions
	mPutCalendar
	mCalendars
	mRemoveCalendar
	mBackfill
	mCancel
	mCancelsSince
	mEndRun
	mGroupSummaries
	mWriteRunLogs
	mRunLog
	mAlertRules
	mPutAlertRule
	mRemoveAlertRule
	mOpenAlert
	mResolveAlert
	mAlertEvents
	mTakeAlert
	mMarkAlertDelivered
	mPruneAlerts
	mStartBroadcast
	mAbandonBroadcasts
	mAdvanceStep
	mParentResults
	mListen // not a round trip per call: one long-lived session
	numMethods
)

var methodNames = [numMethods]string{
	"Now", "RegisterNode", "Heartbeat", "DeleteNode", "LiveNodes", "Nodes", "ExpireNodes",
	"UpsertTasks", "DueTasks", "Claim", "Release", "HeldBy", "Task", "Tasks", "RegisteredTasks",
	"StartExecution", "StartExecutions", "Finish", "History", "PruneHistory", "Orphans",
	"RecoverAll", "Pause", "Resume", "Trigger", "Reschedule", "MarkStale", "Groups", "RemoveTask",
	"PublishTaskSet", "TaskSet", "ChainRun", "TaskCounts", "TaskPage", "TaskTree", "TaskRuns",
	"RecentExecutions", "CountFailures", "RecordAudit", "Audit",
	"CreateSchedules", "UpdateSchedule", "PublishHandlers", "Handlers", "Revisions",
	"PutCalendar", "Calendars", "RemoveCalendar", "Backfill", "Cancel", "CancelsSince", "EndRun", "GroupSummaries", "WriteRunLogs", "RunLog",
	"AlertRules", "PutAlertRule", "RemoveAlertRule", "OpenAlert", "ResolveAlert", "AlertEvents", "TakeAlert", "MarkAlertDelivered", "PruneAlerts",
	"StartBroadcast", "AbandonBroadcasts", "AdvanceStep", "ParentResults",
	"Listen",
}

// countingStore counts a node's store calls as a hook of the one store
// wrapper (repository/instrument): calls, errors and the time the calls
// took (as the caller saw them: round trip included) per method, claims
// asked and won, start and finish rows, the fenced ones among them, and
// recoveries. It never adds I/O of its own.
type countingStore struct {
	calls, errs              [numMethods]atomic.Int64
	took                     [numMethods]atomic.Int64 // nanoseconds
	claimAsked, claimWon     atomic.Int64
	finishRows, fenced, lost atomic.Int64
	startRows                atomic.Int64
	recovered                atomic.Int64
	nodeID                   atomic.Int64
}

// methodIndex is methodNames inverted.
var methodIndex = func() map[string]int {
	m := make(map[string]int, numMethods)
	for i, n := range methodNames {
		m[n] = i
	}
	return m
}()

// newCountingStore wraps s; the result implements repository.Notifier
// exactly when s does. The second result reads the counters.
func newCountingStore(s repository.Store) (repository.Store, *countingStore) {
	c := &countingStore{}
	return instrument.Wrap(s, c), c
}

// Begin implements instrument.Hook.
func (c *countingStore) Begin(string, time.Time) {}

// End implements instrument.Hook.
func (c *countingStore) End(call instrument.Call) {
	m, ok := methodIndex[call.Op]
	if !ok {
		return // a method this table does not know: TestCountingStoreCountsEveryMethod names it
	}
	c.calls[m].Add(1)
	c.took[m].Add(int64(call.Took))
	if err := call.Err; err != nil && !errors.Is(err, repository.ErrClaimLost) && !errors.Is(err, context.Canceled) {
		c.errs[m].Add(1)
	}
	switch m {
	case mRegisterNode:
		if call.Err == nil {
			c.nodeID.Store(int64(call.Node))
		}
	case mClaim:
		c.claimAsked.Add(int64(call.Rows))
		c.claimWon.Add(int64(call.Won))
	case mStartExecution:
		if errors.Is(call.Err, repository.ErrClaimLost) {
			c.lost.Add(1)
		}
	case mStartExecutions:
		if call.Err == nil {
			c.startRows.Add(int64(call.Rows))
			c.lost.Add(int64(call.Rows - call.Won))
		}
	case mFinish:
		if call.Err == nil {
			c.finishRows.Add(int64(call.Rows))
			c.fenced.Add(int64(call.Rows - call.Won))
		}
	case mRecoverAll:
		c.recovered.Add(int64(call.Won))
	}
}

// snapshot reads the counters.
func (c *countingStore) snapshot() storeStats {
	s := storeStats{At: time.Now().UnixNano(), Calls: map[string]int64{}, Errors: map[string]int64{}, CallNanos: map[string]int64{}}
	for i := range numMethods {
		if v := c.calls[i].Load(); v > 0 {
			s.Calls[methodNames[i]] = v
			s.CallNanos[methodNames[i]] = c.took[i].Load()
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
