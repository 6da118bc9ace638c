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
	if _, err := s.Reschedule(ctx, "g", "five", "0 0 * * *", []time.Time{now.Add(time.Hour)}); err != nil {
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
	if _, err := s.RemoveTask(ctx, "g", "five", repository.Removal{KeepHistory: true}); err != nil {
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

// TestMigrateHotTasksInPlace upgrades a database written before 0008 (a
// due pending task, a claimed one, history) and checks that nothing is
// lost, the loader finds the due task through due_at, and a claim, a kept
// finish and a release keep due_at equal to next_start_time on pending
// rows; then it migrates down and up again.
func TestMigrateHotTasksInPlace(t *testing.T) {
	s := openRaw(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateDown(ctx, postgres.LatestSchemaVersion()-7); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.DB().ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO easyjob_tasks (group_name, name, cron, code_cron, status, next_start_time)
VALUES ('g', 'due', '* * * * * *', '* * * * * *', 'pending', now() - interval '1 second'),
       ('g', 'held', '* * * * * *', '* * * * * *', 'doing', now() + interval '1 hour')`)
	exec(`INSERT INTO easyjob_executions (task_id, node_id, scheduled_at, status, finished_at)
SELECT id, 7, now(), 'succeeded', now() FROM easyjob_tasks`)

	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate up over existing rows: %v", err)
	}
	dueEqualsNext := func(when string) {
		t.Helper()
		var bad int
		if err := s.DB().QueryRowContext(ctx,
			`SELECT count(*) FROM easyjob_tasks WHERE status = 'pending' AND due_at IS DISTINCT FROM next_start_time`).Scan(&bad); err != nil || bad != 0 {
			t.Fatalf("%s: %d pending rows with due_at <> next_start_time (%v)", when, bad, err)
		}
	}
	dueEqualsNext("after the upgrade")
	var execs int
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM easyjob_executions`).Scan(&execs); err != nil || execs != 2 {
		t.Fatalf("history after the upgrade: %d rows, %v; want 2", execs, err)
	}
	due, err := s.DueTasks(ctx, repository.DueQuery{Group: "g", Handlers: []string{"due", "held"}, Window: time.Second})
	if err != nil || len(due.Tasks) != 1 || due.Tasks[0].Name != "due" {
		t.Fatalf("DueTasks after the upgrade = %+v, %v; want the due task", due.Tasks, err)
	}

	node, err := s.RegisterNode(ctx, "g", "n", 1)
	if err != nil {
		t.Fatal(err)
	}
	won, err := s.Claim(ctx, node.ID, []repository.TaskRef{due.Tasks[0].Ref()})
	if err != nil || len(won) != 1 {
		t.Fatalf("claim: %+v, %v", won, err)
	}
	res, err := s.Finish(ctx, []repository.Finish{{
		Claim: won[0].Claim(), Revision: won[0].Revision, Status: repository.ExecSucceeded, Next: due.Now.Add(time.Second), NextAttempt: 1,
		Cron: won[0].Cron, Keep: true, Run: &repository.Execution{ScheduledAt: won[0].NextStartTime, Attempt: 1},
	}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("kept finish: %+v, %v", res, err)
	}
	if n, err := s.Release(ctx, []repository.Claim{res[0].Task.Claim()}); err != nil || n != 1 {
		t.Fatalf("release: %d, %v", n, err)
	}
	dueEqualsNext("after claim, kept finish and release")
	due, err = s.DueTasks(ctx, repository.DueQuery{Group: "g", Handlers: []string{"due"}, Window: 2 * time.Second})
	if err != nil || len(due.Tasks) != 1 || !due.Tasks[0].NextStartTime.Equal(res[0].Task.NextStartTime) {
		t.Fatalf("DueTasks after the release = %+v, %v; want the task at its kept next fire", due.Tasks, err)
	}

	if err := s.MigrateDown(ctx, postgres.LatestSchemaVersion()-7); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM easyjob_executions`).Scan(&execs); err != nil || execs != 3 {
		t.Fatalf("history after down: %d rows, %v; want 3", execs, err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	dueEqualsNext("after down and up")
}
