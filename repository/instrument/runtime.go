package instrument

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The runtime's contract (repository.Runtime). The batched calls report
// their rows.

func (s *store) RegisterNode(ctx context.Context, group, name string, weight int) (repository.Node, error) {
	ctx, began, cancel := s.begin(ctx, "RegisterNode")
	defer cancel()
	n, err := s.inner.RegisterNode(ctx, group, name, weight)
	err = bounded(ctx, err)
	s.end(Call{Op: "RegisterNode", Began: began, Err: err, Node: n.ID})
	return n, err
}

func (s *store) Heartbeat(ctx context.Context, n repository.Node) (repository.Node, error) {
	ctx, began, cancel := s.begin(ctx, "Heartbeat")
	defer cancel()
	r, err := s.inner.Heartbeat(ctx, n)
	err = bounded(ctx, err)
	s.end(Call{Op: "Heartbeat", Began: began, Err: err, Node: n.ID})
	return r, err
}

func (s *store) Claim(ctx context.Context, node repository.NodeID, refs []repository.TaskRef) ([]repository.Task, error) {
	ctx, began, cancel := s.begin(ctx, "Claim")
	defer cancel()
	won, err := s.inner.Claim(ctx, node, refs)
	err = bounded(ctx, err)
	s.end(Call{Op: "Claim", Began: began, Err: err, Rows: len(refs), Won: len(won)})
	return won, err
}

func (s *store) Release(ctx context.Context, claims []repository.Claim) (int, error) {
	ctx, began, cancel := s.begin(ctx, "Release")
	defer cancel()
	k, err := s.inner.Release(ctx, claims)
	err = bounded(ctx, err)
	s.end(Call{Op: "Release", Began: began, Err: err, Rows: len(claims), Won: k})
	return k, err
}

func (s *store) StartExecutions(ctx context.Context, reqs []repository.ExecStart) ([]repository.StartResult, error) {
	ctx, began, cancel := s.begin(ctx, "StartExecutions")
	defer cancel()
	res, err := s.inner.StartExecutions(ctx, reqs)
	won := 0
	for _, r := range res {
		if r.Err == nil {
			won++
		}
	}
	err = bounded(ctx, err)
	s.end(Call{Op: "StartExecutions", Began: began, Err: err, Rows: len(reqs), Won: won})
	return res, err
}

func (s *store) Finish(ctx context.Context, fs []repository.Finish) ([]repository.FinishResult, error) {
	ctx, began, cancel := s.begin(ctx, "Finish")
	defer cancel()
	res, err := s.inner.Finish(ctx, fs)
	won := 0
	for _, r := range res {
		if r.Err == nil {
			won++
		}
	}
	err = bounded(ctx, err)
	s.end(Call{Op: "Finish", Began: began, Err: err, Rows: len(fs), Won: won})
	return res, err
}

func (s *store) RecoverAll(ctx context.Context, rs []repository.Recovery) ([]error, error) {
	ctx, began, cancel := s.begin(ctx, "RecoverAll")
	defer cancel()
	errs, err := s.inner.RecoverAll(ctx, rs)
	won := 0
	for _, e := range errs {
		if e == nil {
			won++
		}
	}
	err = bounded(ctx, err)
	s.end(Call{Op: "RecoverAll", Began: began, Err: err, Rows: len(rs), Won: won})
	return errs, err
}

func (s *store) Now(ctx context.Context) (time.Time, error) {
	return call(ctx, s, "Now", func(ctx context.Context) (time.Time, error) { return s.inner.Now(ctx) })
}

func (s *store) DeleteNode(ctx context.Context, id repository.NodeID) error {
	_, err := call(ctx, s, "DeleteNode", func(ctx context.Context) (struct{}, error) { return struct{}{}, s.inner.DeleteNode(ctx, id) })
	return err
}

func (s *store) LiveNodes(ctx context.Context, group string, within time.Duration) ([]repository.Node, error) {
	return call(ctx, s, "LiveNodes", func(ctx context.Context) ([]repository.Node, error) { return s.inner.LiveNodes(ctx, group, within) })
}

func (s *store) Nodes(ctx context.Context, group string) ([]repository.Node, error) {
	return call(ctx, s, "Nodes", func(ctx context.Context) ([]repository.Node, error) { return s.inner.Nodes(ctx, group) })
}

func (s *store) TaskSet(ctx context.Context, id string) ([]string, error) {
	return call(ctx, s, "TaskSet", func(ctx context.Context) ([]string, error) { return s.inner.TaskSet(ctx, id) })
}

func (s *store) ExpireNodes(ctx context.Context, group string, deadFor time.Duration) (int, error) {
	return call(ctx, s, "ExpireNodes", func(ctx context.Context) (int, error) { return s.inner.ExpireNodes(ctx, group, deadFor) })
}

func (s *store) PublishTaskSet(ctx context.Context, names []string) (string, error) {
	return call(ctx, s, "PublishTaskSet", func(ctx context.Context) (string, error) { return s.inner.PublishTaskSet(ctx, names) })
}

func (s *store) UpsertTasks(ctx context.Context, group string, defs []repository.TaskDef) ([]repository.Task, error) {
	return call(ctx, s, "UpsertTasks", func(ctx context.Context) ([]repository.Task, error) { return s.inner.UpsertTasks(ctx, group, defs) })
}

func (s *store) DueTasks(ctx context.Context, q repository.DueQuery) (repository.Due, error) {
	return call(ctx, s, "DueTasks", func(ctx context.Context) (repository.Due, error) { return s.inner.DueTasks(ctx, q) })
}

func (s *store) HeldBy(ctx context.Context, node repository.NodeID) ([]repository.Task, error) {
	return call(ctx, s, "HeldBy", func(ctx context.Context) ([]repository.Task, error) { return s.inner.HeldBy(ctx, node) })
}

func (s *store) Task(ctx context.Context, group, name string) (repository.Task, error) {
	return call(ctx, s, "Task", func(ctx context.Context) (repository.Task, error) { return s.inner.Task(ctx, group, name) })
}

func (s *store) StartExecution(ctx context.Context, c repository.Claim, e repository.Execution) (repository.Execution, error) {
	return call(ctx, s, "StartExecution", func(ctx context.Context) (repository.Execution, error) { return s.inner.StartExecution(ctx, c, e) })
}

func (s *store) ChainRun(ctx context.Context, task repository.TaskID, scheduled time.Time) ([]repository.Execution, error) {
	return call(ctx, s, "ChainRun", func(ctx context.Context) ([]repository.Execution, error) {
		return s.inner.ChainRun(ctx, task, scheduled)
	})
}

func (s *store) Orphans(ctx context.Context, group string, deadAfter time.Duration) ([]repository.Orphan, error) {
	return call(ctx, s, "Orphans", func(ctx context.Context) ([]repository.Orphan, error) { return s.inner.Orphans(ctx, group, deadAfter) })
}

func (s *store) RegisteredTasks(ctx context.Context, group string) ([]repository.Task, error) {
	return call(ctx, s, "RegisteredTasks", func(ctx context.Context) ([]repository.Task, error) { return s.inner.RegisteredTasks(ctx, group) })
}

func (s *store) Tasks(ctx context.Context, group string) ([]repository.Task, error) {
	return call(ctx, s, "Tasks", func(ctx context.Context) ([]repository.Task, error) { return s.inner.Tasks(ctx, group) })
}

func (s *store) MarkStale(ctx context.Context, group string, stale []string) ([]repository.Task, error) {
	return call(ctx, s, "MarkStale", func(ctx context.Context) ([]repository.Task, error) { return s.inner.MarkStale(ctx, group, stale) })
}

func (s *store) PruneHistory(ctx context.Context, group string, maxAge time.Duration, maxRows int) (int, error) {
	return call(ctx, s, "PruneHistory", func(ctx context.Context) (int, error) { return s.inner.PruneHistory(ctx, group, maxAge, maxRows) })
}

func (s *store) RemoveTask(ctx context.Context, group, name string, o repository.Removal) ([]repository.Task, error) {
	return call(ctx, s, "RemoveTask", func(ctx context.Context) ([]repository.Task, error) { return s.inner.RemoveTask(ctx, group, name, o) })
}

func (s *store) PublishHandlers(ctx context.Context, group string, hs []repository.HandlerDef) error {
	_, err := call(ctx, s, "PublishHandlers", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.inner.PublishHandlers(ctx, group, hs)
	})
	return err
}

func (s *store) Handlers(ctx context.Context, group string) ([]repository.HandlerDef, error) {
	return call(ctx, s, "Handlers", func(ctx context.Context) ([]repository.HandlerDef, error) { return s.inner.Handlers(ctx, group) })
}

func (s *store) Calendars(ctx context.Context, group string) ([]repository.Calendar, error) {
	return call(ctx, s, "Calendars", func(ctx context.Context) ([]repository.Calendar, error) { return s.inner.Calendars(ctx, group) })
}

func (s *store) CancelsSince(ctx context.Context, group string, since time.Time) ([]repository.RunCancel, error) {
	return call(ctx, s, "CancelsSince", func(ctx context.Context) ([]repository.RunCancel, error) {
		return s.inner.CancelsSince(ctx, group, since)
	})
}

func (s *store) EndRun(ctx context.Context, r repository.RunEnd) error {
	ctx, began, cancel := s.begin(ctx, "EndRun")
	defer cancel()
	err := bounded(ctx, s.inner.EndRun(ctx, r))
	s.end(Call{Op: "EndRun", Began: began, Err: err, Node: r.Node})
	return err
}

func (s *store) WriteRunLogs(ctx context.Context, logs []repository.RunLogUpdate) (int, error) {
	return call(ctx, s, "WriteRunLogs", func(ctx context.Context) (int, error) { return s.inner.WriteRunLogs(ctx, logs) })
}

func (s *store) StartBroadcast(ctx context.Context, b repository.BroadcastStart) (repository.Execution, error) {
	ctx, began, cancel := s.begin(ctx, "StartBroadcast")
	defer cancel()
	x, err := s.inner.StartBroadcast(ctx, b)
	err = bounded(ctx, err)
	s.end(Call{Op: "StartBroadcast", Began: began, Err: err, Node: b.Node})
	return x, err
}

func (s *store) AbandonBroadcasts(ctx context.Context, group string, deadAfter time.Duration) (int, error) {
	return call(ctx, s, "AbandonBroadcasts", func(ctx context.Context) (int, error) { return s.inner.AbandonBroadcasts(ctx, group, deadAfter) })
}
