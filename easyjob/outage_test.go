package easyjob

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// errOutage is what an outageStore answers while it is down.
var errOutage = errors.New("test: database unreachable")

// outageStore is one node's view of the database: while down, every call
// fails as if the server were unreachable from that node, while other
// nodes (and the test) still reach it. Restoring nodes one by one plays a
// database outage in which the nodes reconnect in some order.
type outageStore struct {
	repository.Store
	down     atomic.Bool
	failedAt atomic.Int64 // unix nanos of the first call failed, 0 before
}

func (s *outageStore) fail() error {
	if s.down.Load() {
		s.failedAt.CompareAndSwap(0, time.Now().UnixNano())
		return errOutage
	}
	return nil
}

func (s *outageStore) Now(ctx context.Context) (time.Time, error) {
	if err := s.fail(); err != nil {
		return time.Time{}, err
	}
	return s.Store.Now(ctx)
}

func (s *outageStore) RegisterNode(ctx context.Context, group, name string, weight int) (repository.Node, error) {
	if err := s.fail(); err != nil {
		return repository.Node{}, err
	}
	return s.Store.RegisterNode(ctx, group, name, weight)
}

func (s *outageStore) Heartbeat(ctx context.Context, n repository.Node) (repository.Node, error) {
	if err := s.fail(); err != nil {
		return repository.Node{}, err
	}
	return s.Store.Heartbeat(ctx, n)
}

func (s *outageStore) DeleteNode(ctx context.Context, id repository.NodeID) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.DeleteNode(ctx, id)
}

func (s *outageStore) LiveNodes(ctx context.Context, group string, within time.Duration) ([]repository.Node, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.LiveNodes(ctx, group, within)
}

func (s *outageStore) ExpireNodes(ctx context.Context, group string, deadFor time.Duration) (int, error) {
	if err := s.fail(); err != nil {
		return 0, err
	}
	return s.Store.ExpireNodes(ctx, group, deadFor)
}

func (s *outageStore) DueTasks(ctx context.Context, q repository.DueQuery) (repository.Due, error) {
	if err := s.fail(); err != nil {
		return repository.Due{}, err
	}
	return s.Store.DueTasks(ctx, q)
}

func (s *outageStore) Claim(ctx context.Context, node repository.NodeID, refs []repository.TaskRef) ([]repository.Task, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.Claim(ctx, node, refs)
}

func (s *outageStore) Release(ctx context.Context, claims []repository.Claim) (int, error) {
	if err := s.fail(); err != nil {
		return 0, err
	}
	return s.Store.Release(ctx, claims)
}

func (s *outageStore) HeldBy(ctx context.Context, node repository.NodeID) ([]repository.Task, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.HeldBy(ctx, node)
}

func (s *outageStore) Task(ctx context.Context, group, name string) (repository.Task, error) {
	if err := s.fail(); err != nil {
		return repository.Task{}, err
	}
	return s.Store.Task(ctx, group, name)
}

func (s *outageStore) StartExecution(ctx context.Context, c repository.Claim, e repository.Execution) (repository.Execution, error) {
	if err := s.fail(); err != nil {
		return repository.Execution{}, err
	}
	return s.Store.StartExecution(ctx, c, e)
}

func (s *outageStore) StartExecutions(ctx context.Context, reqs []repository.ExecStart) ([]repository.StartResult, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.StartExecutions(ctx, reqs)
}

func (s *outageStore) Finish(ctx context.Context, fs []repository.Finish) ([]repository.FinishResult, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.Finish(ctx, fs)
}

func (s *outageStore) PruneHistory(ctx context.Context, group string, maxAge time.Duration, maxRows int) (int, error) {
	if err := s.fail(); err != nil {
		return 0, err
	}
	return s.Store.PruneHistory(ctx, group, maxAge, maxRows)
}

func (s *outageStore) Orphans(ctx context.Context, group string, deadAfter time.Duration) ([]repository.Orphan, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.Orphans(ctx, group, deadAfter)
}

func (s *outageStore) RecoverAll(ctx context.Context, rs []repository.Recovery) ([]error, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.RecoverAll(ctx, rs)
}

func (s *outageStore) ChainRun(ctx context.Context, task repository.TaskID, scheduled time.Time) ([]repository.Execution, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.ChainRun(ctx, task, scheduled)
}
