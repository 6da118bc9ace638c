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

func (s *store) RecordResult(ctx context.Context, execution int64, result string) error {
	_, err := call(ctx, s, "RecordResult", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.inner.RecordResult(ctx, execution, result)
	})
	return err
}

func (s *store) ParentResults(ctx context.Context, step repository.TaskID) (map[string]string, error) {
	return call(ctx, s, "ParentResults", func(ctx context.Context) (map[string]string, error) { return s.inner.ParentResults(ctx, step) })
}
