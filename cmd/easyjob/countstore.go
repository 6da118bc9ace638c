package main

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
	mRecover
	mRecoverAll
	mPause
	mResume
	mTrigger
	mReschedule
	mListen // not a round trip per call: one long-lived session
	numMethods
)

var methodNames = [numMethods]string{
	"Now", "RegisterNode", "Heartbeat", "DeleteNode", "LiveNodes", "Nodes", "ExpireNodes",
	"UpsertTasks", "DueTasks", "Claim", "Release", "HeldBy", "Task", "Tasks",
	"StartExecution", "StartExecutions", "Finish", "History", "PruneHistory", "Orphans", "Recover",
	"RecoverAll", "Pause", "Resume", "Trigger", "Reschedule", "Listen",
}

// storeStats is a snapshot of a countingStore (also the stats file of a
// node process, as JSON).
type storeStats struct {
	At           int64            `json:"at_unix_nano"` // when the snapshot was taken
	NodeIDs      []int64          `json:"node_ids,omitempty"`
	Calls        map[string]int64 `json:"calls"`
	Errors       map[string]int64 `json:"errors,omitempty"`
	ClaimAsked   int64            `json:"claim_refs_asked"`
	ClaimWon     int64            `json:"claim_rows_won"`
	FinishRows   int64            `json:"finish_rows"`
	StartRows    int64            `json:"start_rows"`      // executions asked of StartExecutions
	FencedFinish int64            `json:"fenced_finishes"` // Finish results with ErrClaimLost
	StartLost    int64            `json:"start_lost"`      // StartExecution with ErrClaimLost
	Recovered    int64            `json:"recovered"`       // successful Recover calls
	Exited       bool             `json:"exited,omitempty"`
	// PeakRSSBytes is the node process's own VmHWM (/proc/self/status).
	// The rusage of a child is not used for memory: a child forked with
	// CLONE_VM starts on the harness's address space, so its ru_maxrss
	// includes the harness's peak at spawn time.
	PeakRSSBytes int64 `json:"peak_rss_bytes,omitempty"`
}

// RoundTrips is the number of store calls that cost a round trip (every
// method but Listen).
func (s storeStats) RoundTrips() int64 {
	var k int64
	for name, v := range s.Calls {
		if name != "Listen" {
			k += v
		}
	}
	return k
}

// Conflicts is the number of claims attempted but lost.
func (s storeStats) Conflicts() int64 { return s.ClaimAsked - s.ClaimWon }

// add accumulates o into s.
func (s *storeStats) add(o storeStats) {
	if s.Calls == nil {
		s.Calls = map[string]int64{}
	}
	if s.Errors == nil {
		s.Errors = map[string]int64{}
	}
	for k, v := range o.Calls {
		s.Calls[k] += v
	}
	for k, v := range o.Errors {
		s.Errors[k] += v
	}
	s.NodeIDs = append(s.NodeIDs, o.NodeIDs...)
	s.ClaimAsked += o.ClaimAsked
	s.ClaimWon += o.ClaimWon
	s.FinishRows += o.FinishRows
	s.StartRows += o.StartRows
	s.FencedFinish += o.FencedFinish
	s.StartLost += o.StartLost
	s.Recovered += o.Recovered
	s.At = max(s.At, o.At)
}

// sub returns s − o for the counters (rates over a window).
func (s storeStats) sub(o storeStats) storeStats {
	d := storeStats{At: s.At, Calls: map[string]int64{}, Errors: map[string]int64{}}
	for k, v := range s.Calls {
		d.Calls[k] = v - o.Calls[k]
	}
	for k, v := range s.Errors {
		d.Errors[k] = v - o.Errors[k]
	}
	d.ClaimAsked = s.ClaimAsked - o.ClaimAsked
	d.ClaimWon = s.ClaimWon - o.ClaimWon
	d.FinishRows = s.FinishRows - o.FinishRows
	d.StartRows = s.StartRows - o.StartRows
	d.FencedFinish = s.FencedFinish - o.FencedFinish
	d.StartLost = s.StartLost - o.StartLost
	d.Recovered = s.Recovered - o.Recovered
	return d
}

// countingStore decorates a repository.Store: every call is delegated and
// counted per method; claims asked vs won and fenced finishes are counted
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

func (c *countingStore) Recover(ctx context.Context, r repository.Recovery) error {
	c.count(mRecover)
	err := c.inner.Recover(ctx, r)
	if err == nil {
		c.recovered.Add(1)
	}
	return c.done(mRecover, err)
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

// Close is not counted (no round trip).
func (c *countingStore) Close() error { return c.inner.Close() }

var (
	_ repository.Store    = (*countingStore)(nil)
	_ repository.Notifier = (*countingNotifier)(nil)
)
