package memory

import (
	"context"
	"fmt"

	"github.com/easyjob-go/easyjob/repository"
)

// StartExecutions is StartExecution for a batch, each start with its own
// fence, results in the order of reqs, all under one lock and one now like
// the single Postgres statement. An empty batch does no I/O.
func (s *Store) StartExecutions(ctx context.Context, reqs []repository.ExecStart) ([]repository.StartResult, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	for _, r := range reqs {
		if err := repository.CheckArgs(fmt.Sprintf("start execution of task %d", r.Claim.ID), r.Execution.Args); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	out := make([]repository.StartResult, len(reqs))
	for i, r := range reqs {
		out[i].Execution, out[i].Err = s.startLocked(r.Claim, r.Execution, now)
	}
	return out, nil
}
