package instrument

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The DAG steps' calls (repository.DagStore).

func (s *store) AdvanceStep(ctx context.Context, a repository.StepAdvance) (time.Time, error) {
	return call(ctx, s, "AdvanceStep", func(ctx context.Context) (time.Time, error) { return s.inner.AdvanceStep(ctx, a) })
}

func (s *store) ParentResults(ctx context.Context, step repository.TaskID) (map[string]string, error) {
	return call(ctx, s, "ParentResults", func(ctx context.Context) (map[string]string, error) { return s.inner.ParentResults(ctx, step) })
}
