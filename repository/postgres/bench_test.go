package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// BenchmarkClaim measures the loader's claim statement: one UPDATE ...
// FROM (VALUES ...) for a batch of due tasks. Each iteration claims the
// whole batch (every claim wins) and, with the timer stopped, releases it
// again so the next iteration finds the rows pending at a known version.
func BenchmarkClaim(b *testing.B) {
	s := pgtest.OpenStore(b, pgtest.SharedDatabase(b))
	ctx := context.Background()
	for _, batch := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			group := fmt.Sprintf("bench-claim-%d-%d", batch, time.Now().UnixNano())
			node, err := s.RegisterNode(ctx, group, "bench", 1)
			if err != nil {
				b.Fatal(err)
			}
			now, err := s.Now(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defs := make([]repository.TaskDef, batch)
			for i := range defs {
				defs[i] = repository.TaskDef{Name: fmt.Sprintf("t%03d", i), Cron: "* * * * * *", NextStartTime: now}
			}
			tasks, err := s.UpsertTasks(ctx, group, defs)
			if err != nil {
				b.Fatal(err)
			}
			refs := make([]repository.TaskRef, batch)
			for i, t := range tasks {
				refs[i] = t.Ref()
			}
			claims := make([]repository.Claim, batch)

			b.ResetTimer()
			for range b.N {
				won, err := s.Claim(ctx, node.ID, refs)
				if err != nil || len(won) != batch {
					b.Fatalf("claim won %d of %d: %v", len(won), batch, err)
				}
				b.StopTimer()
				for i, t := range won {
					claims[i] = t.Claim()
				}
				if n, err := s.Release(ctx, claims); err != nil || n != batch {
					b.Fatalf("release %d of %d: %v", n, batch, err)
				}
				// won is ordered by id like refs; release bumped each version.
				for i, t := range won {
					refs[i] = repository.TaskRef{ID: t.ID, Version: t.Version + 1}
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "claims/s")
		})
	}
}
