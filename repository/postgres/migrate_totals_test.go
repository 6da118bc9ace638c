package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestMigrateTaskTotals upgrades a database written before 0014 (at
// version 13): the group totals the overview reads count the live tasks
// already there, tombstones not, and follow the writes after. Down again,
// the table goes and the tasks stay.
func TestMigrateTaskTotals(t *testing.T) {
	ctx := context.Background()
	s, back := atVersion(t, 13)
	if tableExists(t, s, "easyjob_task_totals") {
		t.Fatal("easyjob_task_totals survived the down migration")
	}
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO easyjob_tasks (group_name, name, handler, dynamic, cron, status, next_start_time)
SELECT 'g', 'dyn-' || i, 'k', true, '0 * * * *', CASE WHEN i = 1 THEN 'removed' ELSE 'pending' END, now()
FROM generate_series(1, 7) i`); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate up over existing rows: %v", err)
	}
	plain := func() int {
		t.Helper()
		counts, err := s.TaskCounts(ctx, "g", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, c := range counts {
			if c == (repository.TaskCount{Status: repository.TaskPending, Count: c.Count}) {
				n += c.Count
			}
		}
		return n
	}
	if n := plain(); n != 6 {
		t.Fatalf("after the upgrade: %d plain schedules counted, want 6 (the tombstone not)", n)
	}
	if _, err := s.CreateSchedules(ctx, "g", []repository.ScheduleDef{
		{Name: "dyn-1", Handler: "k", Cron: "0 * * * *"}, {Name: "dyn-8", Handler: "k", Cron: "0 * * * *"},
	}); err != nil {
		t.Fatal(err)
	}
	if n := plain(); n != 8 {
		t.Fatalf("after reviving one and creating one: %d counted, want 8", n)
	}
	if err := s.MigrateDown(ctx, back); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if !taskRowExists(t, s, "g", "dyn-8") {
		t.Fatal("a schedule is gone after down")
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if n := plain(); n != 8 {
		t.Fatalf("up again: %d counted, want 8", n)
	}
}
