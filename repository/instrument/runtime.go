package instrument

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The runtime's contract (repository.Runtime). The batched calls report
// their rows.

func (s *store) RegisterNode(ctx context.Context, group, name string, weight int) (repository.Node, error) {
	began := s.begin("RegisterNode")
	n, err := s.inner.RegisterNode(ctx, group, name, weight)
	s.end(Call{Op: "RegisterNode", Began: began, Err: err, Node: n.ID})
	return n, err
}

func (s *store) Heartbeat(ctx context.Context, n repository.Node) (repository.Node, error) {
	began := s.begin("Heartbeat")
	r, err := s.inner.Heartbeat(ctx, n)
	s.end(Call{Op: "Heartbeat", Began: began, Err: err, Node: n.ID})
	return r, err
}

func (s *store) Claim(ctx context.Context, node repository.NodeID, refs []repository.TaskRef) ([]repository.Task, error) {
	began := s.begin("Claim")
	won, err := s.inner.Claim(ctx, node, refs)
	s.end(Call{Op: "Claim", Began: began, Err: err, Rows: len(refs), Won: len(won)})
	return won, err
}

func (s *store) Release(ctx context.Context, claims []repository.Claim) (int, error) {
	began := s.begin("Release")
	k, err := s.inner.Release(ctx, claims)
	s.end(Call{Op: "Release", Began: began, Err: err, Rows: len(claims), Won: k})
	return k, err
}

func (s *store) StartExecutions(ctx context.Context, reqs []repository.ExecStart) ([]repository.StartResult, error) {
	began := s.begin("StartExecutions")
	res, err := s.inner.StartExecutions(ctx, reqs)
	won := 0
	for _, r := range res {
		if r.Err == nil {
			won++
		}
	}
	s.end(Call{Op: "StartExecutions", Began: began, Err: err, Rows: len(reqs), Won: won})
	return res, err
}

func (s *store) Finish(ctx context.Context, fs []repository.Finish) ([]repository.FinishResult, error) {
	began := s.begin("Finish")
	res, err := s.inner.Finish(ctx, fs)
	won := 0
	for _, r := range res {
		if r.Err == nil {
			won++
		}
	}
	s.end(Call{Op: "Finish", Began: began, Err: err, Rows: len(fs), Won: won})
	return res, err
}

func (s *store) RecoverAll(ctx context.Context, rs []repository.Recovery) ([]error, error) {
	began := s.begin("RecoverAll")
	errs, err := s.inner.RecoverAll(ctx, rs)
	won := 0
	for _, e := range errs {
		if e == nil {
			won++
		}
	}
	s.end(Call{Op: "RecoverAll", Began: began, Err: err, Rows: len(rs), Won: won})
	return errs, err
}

func (s *store) Now(ctx context.Context) (time.Time, error) {
	return call(s, "Now", func() (time.Time, error) { return s.inner.Now(ctx) })
}

func (s *store) DeleteNode(ctx context.Context, id repository.NodeID) error {
	_, err := call(s, "DeleteNode", func() (struct{}, error) { return struct{}{}, s.inner.DeleteNode(ctx, id) })
	return err
}

func (s *store) LiveNodes(ctx context.Context, group string, within time.Duration) ([]repository.Node, error) {
	return call(s, "LiveNodes", func() ([]repository.Node, error) { return s.inner.LiveNodes(ctx, group, within) })
}

func (s *store) Nodes(ctx context.Context, group string) ([]repository.Node, error) {
	return call(s, "Nodes", func() ([]repository.Node, error) { return s.inner.Nodes(ctx, group) })
}

func (s *store) TaskSet(ctx context.Context, id string) ([]string, error) {
	return call(s, "TaskSet", func() ([]string, error) { return s.inner.TaskSet(ctx, id) })
}

func (s *store) ExpireNodes(ctx context.Context, group string, deadFor time.Duration) (int, error) {
	return call(s, "ExpireNodes", func() (int, error) { return s.inner.ExpireNodes(ctx, group, deadFor) })
}

func (s *store) PublishTaskSet(ctx context.Context, names []string) (string, error) {
	return call(s, "PublishTaskSet", func() (string, error) { return s.inner.PublishTaskSet(ctx, names) })
}

func (s *store) UpsertTasks(ctx context.Context, group string, defs []repository.TaskDef) ([]repository.Task, error) {
	return call(s, "UpsertTasks", func() ([]repository.Task, error) { return s.inner.UpsertTasks(ctx, group, defs) })
}

func (s *store) DueTasks(ctx context.Context, q repository.DueQuery) (repository.Due, error) {
	return call(s, "DueTasks", func() (repository.Due, error) { return s.inner.DueTasks(ctx, q) })
}

func (s *store) HeldBy(ctx context.Context, node repository.NodeID) ([]repository.Task, error) {
	return call(s, "HeldBy", func() ([]repository.Task, error) { return s.inner.HeldBy(ctx, node) })
}

func (s *store) Task(ctx context.Context, group, name string) (repository.Task, error) {
	return call(s, "Task", func() (repository.Task, error) { return s.inner.Task(ctx, group, name) })
}

func (s *store) StartExecution(ctx context.Context, c repository.Claim, e repository.Execution) (repository.Execution, error) {
	return call(s, "StartExecution", func() (repository.Execution, error) { return s.inner.StartExecution(ctx, c, e) })
}

func (s *store) ChainRun(ctx context.Context, task repository.TaskID, scheduled time.Time) ([]repository.Execution, error) {
	return call(s, "ChainRun", func() ([]repository.Execution, error) { return s.inner.ChainRun(ctx, task, scheduled) })
}

func (s *store) Orphans(ctx context.Context, group string, deadAfter time.Duration) ([]repository.Orphan, error) {
	return call(s, "Orphans", func() ([]repository.Orphan, error) { return s.inner.Orphans(ctx, group, deadAfter) })
}

func (s *store) Tasks(ctx context.Context, group string) ([]repository.Task, error) {
	return call(s, "Tasks", func() ([]repository.Task, error) { return s.inner.Tasks(ctx, group) })
}

func (s *store) MarkStale(ctx context.Context, group string, stale []string) ([]repository.Task, error) {
	return call(s, "MarkStale", func() ([]repository.Task, error) { return s.inner.MarkStale(ctx, group, stale) })
}

func (s *store) PruneHistory(ctx context.Context, group string, maxAge time.Duration, maxRows int) (int, error) {
	return call(s, "PruneHistory", func() (int, error) { return s.inner.PruneHistory(ctx, group, maxAge, maxRows) })
}

func (s *store) RemoveTask(ctx context.Context, group, name string, o repository.Removal) ([]repository.Task, error) {
	return call(s, "RemoveTask", func() ([]repository.Task, error) { return s.inner.RemoveTask(ctx, group, name, o) })
}
