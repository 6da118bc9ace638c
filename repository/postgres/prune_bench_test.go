package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// BenchmarkPruneHistory times retention over a long history: 100 tasks
// with 2 000 finished runs each (200 000 rows, one an hour old per task
// in two), pruned by age (the older half) and by rows (keep 1 000 per
// task). The history is rebuilt, untimed, before each iteration.
func BenchmarkPruneHistory(b *testing.B) {
	s := pgtest.OpenStore(b, pgtest.NewDatabase(b))
	ctx := context.Background()
	const tasks, runs = 100, 2000
	defs := make([]repository.TaskDef, tasks)
	for i := range defs {
		defs[i] = repository.TaskDef{Name: fmt.Sprintf("t%03d", i), Cron: "* * * * * *", NextStartTime: time.Now()}
	}
	if _, err := s.UpsertTasks(ctx, "g", defs); err != nil {
		b.Fatal(err)
	}
	fill := func(b *testing.B) {
		b.Helper()
		if _, err := s.DB().ExecContext(ctx, `TRUNCATE easyjob_executions`); err != nil {
			b.Fatal(err)
		}
		// Run k of each task started k seconds apart, the older half over an hour ago.
		if _, err := s.DB().ExecContext(ctx, `INSERT INTO easyjob_executions
  (task_id, node_id, scheduled_at, started_at, finished_at, status)
SELECT t.id, 1, now() - (k * interval '4 second'), now() - (k * interval '4 second'), now() - (k * interval '4 second'), 'succeeded'
FROM easyjob_tasks t, generate_series(1, ?::int) k ORDER BY k DESC, t.id`, runs); err != nil {
			b.Fatal(err)
		}
		if _, err := s.DB().ExecContext(ctx, `ANALYZE easyjob_executions`); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name    string
		maxAge  time.Duration
		maxRows int
	}{{"age", time.Hour, 0}, {"rows", 0, runs / 2}} {
		b.Run(c.name, func(b *testing.B) {
			deleted := 0
			for range b.N {
				b.StopTimer()
				fill(b)
				b.StartTimer()
				n, err := s.PruneHistory(ctx, "g", c.maxAge, c.maxRows)
				if err != nil {
					b.Fatal(err)
				}
				deleted += n
			}
			b.ReportMetric(float64(deleted)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
