package instrument

import (
	"context"

	"github.com/easyjob-go/easyjob/repository"
)

func (s *store) GroupSummaries(ctx context.Context, q repository.GroupQuery) ([]repository.GroupSummary, error) {
	return call(ctx, s, "GroupSummaries", func(ctx context.Context) ([]repository.GroupSummary, error) {
		return s.inner.GroupSummaries(ctx, q)
	})
}
