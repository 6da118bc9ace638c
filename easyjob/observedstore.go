package easyjob

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// observedStore times every store call and reports it to the observer as
// an EventStoreOp (Op is the method's name). Run puts it in front of the
// store only when Config.Observer is set: without an observer the runtime
// calls the store directly.
//
// The embedded Store only keeps the build green when the interface grows:
// a method without an explicit (timed) override here is delegated
// untimed, and TestObservedStoreTimesEveryMethod fails until it is added.
type observedStore struct {
	repository.Store
	inner repository.Store
	obs   Observer
	group string
	node  atomic.Int64 // set by RegisterNode, so events name the node
}

// observedNotifier is an observedStore over a store that also notifies,
// so wrapping keeps LISTEN/NOTIFY working.
type observedNotifier struct {
	*observedStore
	n repository.Notifier
}

// observeStore wraps s for obs (s itself when obs is nil); the result
// implements repository.Notifier exactly when s does.
func observeStore(s repository.Store, obs Observer, group string) repository.Store {
	if obs == nil {
		return s
	}
	o := &observedStore{Store: s, inner: s, obs: obs, group: group}
	if n, ok := s.(repository.Notifier); ok {
		return &observedNotifier{observedStore: o, n: n}
	}
	return o
}

// done reports one call of op that began at start.
func (s *observedStore) done(op string, start time.Time, err error) {
	s.obs.Observe(Event{Kind: EventStoreOp, Group: s.group, Node: s.node.Load(), Op: op, Duration: time.Since(start), Err: err})
}

// Listen implements repository.Notifier. It is reported once, when the
// LISTEN session ends: its Duration is the session's length.
func (s *observedNotifier) Listen(ctx context.Context, group string, wake func()) error {
	start := time.Now()
	err := s.n.Listen(ctx, group, wake)
	s.done("Listen", start, err)
	return err
}

func (s *observedStore) Now(ctx context.Context) (time.Time, error) {
	start := time.Now()
	t, err := s.inner.Now(ctx)
	s.done("Now", start, err)
	return t, err
}

func (s *observedStore) RegisterNode(ctx context.Context, group, name string, weight int) (repository.Node, error) {
	start := time.Now()
	n, err := s.inner.RegisterNode(ctx, group, name, weight)
	if err == nil {
		s.node.Store(int64(n.ID))
	}
	s.done("RegisterNode", start, err)
	return n, err
}

func (s *observedStore) Heartbeat(ctx context.Context, n repository.Node) (repository.Node, error) {
	start := time.Now()
	r, err := s.inner.Heartbeat(ctx, n)
	s.done("Heartbeat", start, err)
	return r, err
}

func (s *observedStore) DeleteNode(ctx context.Context, id repository.NodeID) error {
	start := time.Now()
	err := s.inner.DeleteNode(ctx, id)
	s.done("DeleteNode", start, err)
	return err
}

func (s *observedStore) LiveNodes(ctx context.Context, group string, within time.Duration) ([]repository.Node, error) {
	start := time.Now()
	r, err := s.inner.LiveNodes(ctx, group, within)
	s.done("LiveNodes", start, err)
	return r, err
}

func (s *observedStore) Nodes(ctx context.Context, group string) ([]repository.Node, error) {
	start := time.Now()
	r, err := s.inner.Nodes(ctx, group)
	s.done("Nodes", start, err)
	return r, err
}

func (s *observedStore) ExpireNodes(ctx context.Context, group string, deadFor time.Duration) (int, error) {
	start := time.Now()
	r, err := s.inner.ExpireNodes(ctx, group, deadFor)
	s.done("ExpireNodes", start, err)
	return r, err
}

func (s *observedStore) PublishTaskSet(ctx context.Context, names []string) (string, error) {
	start := time.Now()
	r, err := s.inner.PublishTaskSet(ctx, names)
	s.done("PublishTaskSet", start, err)
	return r, err
}

func (s *observedStore) TaskSet(ctx context.Context, id string) ([]string, error) {
	start := time.Now()
	r, err := s.inner.TaskSet(ctx, id)
	s.done("TaskSet", start, err)
	return r, err
}

func (s *observedStore) UpsertTasks(ctx context.Context, group string, defs []repository.TaskDef) ([]repository.Task, error) {
	start := time.Now()
	r, err := s.inner.UpsertTasks(ctx, group, defs)
	s.done("UpsertTasks", start, err)
	return r, err
}

func (s *observedStore) DueTasks(ctx context.Context, q repository.DueQuery) (repository.Due, error) {
	start := time.Now()
	r, err := s.inner.DueTasks(ctx, q)
	s.done("DueTasks", start, err)
	return r, err
}

func (s *observedStore) Claim(ctx context.Context, node repository.NodeID, refs []repository.TaskRef) ([]repository.Task, error) {
	start := time.Now()
	r, err := s.inner.Claim(ctx, node, refs)
	s.done("Claim", start, err)
	return r, err
}

func (s *observedStore) Release(ctx context.Context, claims []repository.Claim) (int, error) {
	start := time.Now()
	r, err := s.inner.Release(ctx, claims)
	s.done("Release", start, err)
	return r, err
}

func (s *observedStore) HeldBy(ctx context.Context, node repository.NodeID) ([]repository.Task, error) {
	start := time.Now()
	r, err := s.inner.HeldBy(ctx, node)
	s.done("HeldBy", start, err)
	return r, err
}

func (s *observedStore) Task(ctx context.Context, group, name string) (repository.Task, error) {
	start := time.Now()
	r, err := s.inner.Task(ctx, group, name)
	s.done("Task", start, err)
	return r, err
}

func (s *observedStore) Tasks(ctx context.Context, group string) ([]repository.Task, error) {
	start := time.Now()
	r, err := s.inner.Tasks(ctx, group)
	s.done("Tasks", start, err)
	return r, err
}

func (s *observedStore) StartExecution(ctx context.Context, c repository.Claim, e repository.Execution) (repository.Execution, error) {
	start := time.Now()
	r, err := s.inner.StartExecution(ctx, c, e)
	s.done("StartExecution", start, err)
	return r, err
}

func (s *observedStore) StartExecutions(ctx context.Context, reqs []repository.ExecStart) ([]repository.StartResult, error) {
	start := time.Now()
	r, err := s.inner.StartExecutions(ctx, reqs)
	s.done("StartExecutions", start, err)
	return r, err
}

func (s *observedStore) Finish(ctx context.Context, fs []repository.Finish) ([]repository.FinishResult, error) {
	start := time.Now()
	r, err := s.inner.Finish(ctx, fs)
	s.done("Finish", start, err)
	return r, err
}

func (s *observedStore) History(ctx context.Context, group, name string, f repository.HistoryFilter) ([]repository.Execution, error) {
	start := time.Now()
	r, err := s.inner.History(ctx, group, name, f)
	s.done("History", start, err)
	return r, err
}

func (s *observedStore) PruneHistory(ctx context.Context, group string, maxAge time.Duration, maxRows int) (int, error) {
	start := time.Now()
	r, err := s.inner.PruneHistory(ctx, group, maxAge, maxRows)
	s.done("PruneHistory", start, err)
	return r, err
}

func (s *observedStore) Orphans(ctx context.Context, group string, deadAfter time.Duration) ([]repository.Orphan, error) {
	start := time.Now()
	r, err := s.inner.Orphans(ctx, group, deadAfter)
	s.done("Orphans", start, err)
	return r, err
}

func (s *observedStore) RecoverAll(ctx context.Context, rs []repository.Recovery) ([]error, error) {
	start := time.Now()
	r, err := s.inner.RecoverAll(ctx, rs)
	s.done("RecoverAll", start, err)
	return r, err
}

func (s *observedStore) Pause(ctx context.Context, group, name string) (repository.Task, error) {
	start := time.Now()
	r, err := s.inner.Pause(ctx, group, name)
	s.done("Pause", start, err)
	return r, err
}

func (s *observedStore) Resume(ctx context.Context, group, name string) (repository.Task, error) {
	start := time.Now()
	r, err := s.inner.Resume(ctx, group, name)
	s.done("Resume", start, err)
	return r, err
}

func (s *observedStore) Trigger(ctx context.Context, group, name string) (repository.Task, error) {
	start := time.Now()
	r, err := s.inner.Trigger(ctx, group, name)
	s.done("Trigger", start, err)
	return r, err
}

func (s *observedStore) Reschedule(ctx context.Context, group, name, cron string, next time.Time) (repository.Task, error) {
	start := time.Now()
	r, err := s.inner.Reschedule(ctx, group, name, cron, next)
	s.done("Reschedule", start, err)
	return r, err
}

func (s *observedStore) MarkStale(ctx context.Context, group string, stale []string) ([]repository.Task, error) {
	start := time.Now()
	r, err := s.inner.MarkStale(ctx, group, stale)
	s.done("MarkStale", start, err)
	return r, err
}

func (s *observedStore) Groups(ctx context.Context) ([]string, error) {
	start := time.Now()
	r, err := s.inner.Groups(ctx)
	s.done("Groups", start, err)
	return r, err
}

func (s *observedStore) RemoveTask(ctx context.Context, group, name string, o repository.RemoveOptions) ([]repository.Task, error) {
	start := time.Now()
	r, err := s.inner.RemoveTask(ctx, group, name, o)
	s.done("RemoveTask", start, err)
	return r, err
}

func (s *observedStore) TaskCounts(ctx context.Context, group string, liveWithin time.Duration) ([]repository.TaskCount, error) {
	start := time.Now()
	r, err := s.inner.TaskCounts(ctx, group, liveWithin)
	s.done("TaskCounts", start, err)
	return r, err
}

func (s *observedStore) TaskPage(ctx context.Context, group string, q repository.TaskQuery) (repository.TaskPage, error) {
	start := time.Now()
	r, err := s.inner.TaskPage(ctx, group, q)
	s.done("TaskPage", start, err)
	return r, err
}

func (s *observedStore) TaskTree(ctx context.Context, group, name string, liveWithin time.Duration) ([]repository.TaskRow, error) {
	start := time.Now()
	r, err := s.inner.TaskTree(ctx, group, name, liveWithin)
	s.done("TaskTree", start, err)
	return r, err
}

func (s *observedStore) RecentExecutions(ctx context.Context, group string, since time.Time, limit int) ([]repository.Execution, error) {
	start := time.Now()
	r, err := s.inner.RecentExecutions(ctx, group, since, limit)
	s.done("RecentExecutions", start, err)
	return r, err
}

func (s *observedStore) CountFailures(ctx context.Context, group string, since time.Time) (map[repository.ExecStatus]int, error) {
	start := time.Now()
	r, err := s.inner.CountFailures(ctx, group, since)
	s.done("CountFailures", start, err)
	return r, err
}

func (s *observedStore) ChainRun(ctx context.Context, task repository.TaskID, scheduled time.Time) ([]repository.Execution, error) {
	start := time.Now()
	r, err := s.inner.ChainRun(ctx, task, scheduled)
	s.done("ChainRun", start, err)
	return r, err
}

func (s *observedStore) TaskRuns(ctx context.Context, group string, task repository.TaskID, f repository.HistoryFilter) ([]repository.Execution, error) {
	start := time.Now()
	r, err := s.inner.TaskRuns(ctx, group, task, f)
	s.done("TaskRuns", start, err)
	return r, err
}

// Close implements repository.Store; it is not reported.
func (s *observedStore) Close() error { return s.inner.Close() }

var (
	_ repository.Store    = (*observedStore)(nil)
	_ repository.Notifier = (*observedNotifier)(nil)
)
