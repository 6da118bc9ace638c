package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestMigrateLifecycleInPlace upgrades a database written by the schema
// before 0005 (tasks, a paused one, history) and checks that the rows take
// their cron as the code's, keep their history, and follow the override
// rules from then on; then it migrates down past 0005 with a tombstone.
func TestMigrateLifecycleInPlace(t *testing.T) {
	s := openRaw(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// Back to 0004, the schema before task lifecycle.
	if err := s.MigrateDown(ctx, postgres.LatestSchemaVersion()-4); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.DB().ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO easyjob_tasks (group_name, name, cron, status, paused, next_start_time)
VALUES ('g', 'five', '*/5 * * * *', 'pending', false, now() + interval '1 minute'),
       ('g', 'parked', '0 0 * * *', 'paused', true, now() + interval '1 hour')`)
	exec(`INSERT INTO easyjob_executions (task_id, node_id, scheduled_at, status, finished_at)
SELECT id, 7, now(), 'succeeded', now() FROM easyjob_tasks WHERE name = 'five'`)

	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate up over existing rows: %v", err)
	}
	five, err := s.Task(ctx, "g", "five")
	if err != nil {
		t.Fatal(err)
	}
	if five.CodeCron != "*/5 * * * *" || five.Overridden() || !five.StaleSince.IsZero() || five.Version != 1 {
		t.Fatalf("upgraded row: %+v", five)
	}
	parked, err := s.Task(ctx, "g", "parked")
	if err != nil || parked.CodeCron != "0 0 * * *" || parked.Status != repository.TaskPaused {
		t.Fatalf("upgraded paused row: %+v, %v", parked, err)
	}

	// From now on an operator's reschedule survives a restart of the same code.
	now, _ := s.Now(ctx)
	if _, err := s.Reschedule(ctx, "g", "five", "0 0 * * *", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	defs := []repository.TaskDef{
		{Name: "five", Cron: "*/5 * * * *", NextStartTime: now.Add(time.Minute)},
		{Name: "parked", Cron: "0 0 * * *", NextStartTime: now.Add(time.Hour)},
	}
	rows, err := s.UpsertTasks(ctx, "g", defs)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Cron != "0 0 * * *" || !rows[0].Overridden() || rows[1].Status != repository.TaskPaused {
		t.Fatalf("after a restart: five %q overridden %v, parked %s", rows[0].Cron, rows[0].Overridden(), rows[1].Status)
	}

	// A tombstone cannot be expressed below 0005: down drops it with its history.
	if _, err := s.RemoveTask(ctx, "g", "five", repository.RemoveOptions{KeepHistory: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateDown(ctx, postgres.LatestSchemaVersion()-4); err != nil {
		t.Fatalf("migrate down with a tombstone: %v", err)
	}
	var n int
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM easyjob_tasks`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after down: %d task rows, %v; want the paused one", n, err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}
