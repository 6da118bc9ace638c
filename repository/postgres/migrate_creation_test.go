package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// TestMigrateBulkCreation upgrades a database written before 0015 (at
// version 14): the revisions lose their foreign key but still go with
// their task (a DELETE, a TRUNCATE), a writer that leaves due_at out
// still gets it from the insert trigger, and the audit log is keyed by
// group. Down again, the foreign key, the unconditional trigger and the
// audit log's indexes come back.
func TestMigrateBulkCreation(t *testing.T) {
	ctx := context.Background()
	s, back := atVersion(t, 14)
	if !revisionsKeyed(t, s) {
		t.Fatal("at version 14, easyjob_task_revisions has no foreign key")
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	if revisionsKeyed(t, s) {
		t.Fatal("easyjob_task_revisions kept its foreign key")
	}
	if key := auditKey(t, s); key != "group_name, id" || tableExists(t, s, "easyjob_audit_group_idx") {
		t.Fatalf("the audit log's key is (%s), want (group_name, id) and no other index", key)
	}

	created, err := s.CreateSchedules(ctx, "g", []repository.ScheduleDef{
		{Name: "a", Handler: "k", Cron: "0 * * * *", NextStartTime: time.Now().Add(time.Hour)},
		{Name: "b", Handler: "k", Cron: "0 * * * *", NextStartTime: time.Now().Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSchedule(ctx, "g", "a", repository.ScheduleDef{Handler: "k", Cron: "30 * * * *"}); err != nil {
		t.Fatal(err)
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := s.DB().QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	revisionsOf := func(id repository.TaskID) int {
		t.Helper()
		return count(`SELECT count(*) FROM easyjob_task_revisions WHERE task_id = ?`, int64(id))
	}
	if n := revisionsOf(created[0].ID); n != 2 {
		t.Fatalf("a has %d revisions, want 2", n)
	}
	if _, err := s.RemoveTask(ctx, "g", "a", repository.Removal{}); err != nil {
		t.Fatal(err)
	}
	if n := revisionsOf(created[0].ID); n != 0 {
		t.Errorf("a deleted: %d of its revisions left, want none", n)
	}
	if n := revisionsOf(created[1].ID); n != 1 {
		t.Errorf("b has %d revisions after a's removal, want 1", n)
	}

	// A writer that leaves due_at out, as UpsertTasks does.
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO easyjob_tasks (group_name, name, handler, cron, status, next_start_time)
VALUES ('g', 'raw', 'raw', '0 * * * *', 'pending', now() + interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT count(*) FROM easyjob_tasks WHERE due_at IS DISTINCT FROM next_start_time`); n != 0 {
		t.Errorf("%d rows with due_at apart from next_start_time, want none", n)
	}

	// Naming the revisions in the same TRUNCATE must work too.
	if _, err := s.DB().ExecContext(ctx, `TRUNCATE easyjob_tasks, easyjob_task_revisions CASCADE`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSchedules(ctx, "g", []repository.ScheduleDef{{Name: "c", Handler: "k", Cron: "0 * * * *"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `TRUNCATE easyjob_tasks CASCADE`); err != nil {
		t.Fatal(err)
	}
	if n := count(`SELECT count(*) FROM easyjob_task_revisions`); n != 0 {
		t.Errorf("tasks truncated: %d revisions left, want none", n)
	}

	if _, err := s.CreateSchedules(ctx, "g", []repository.ScheduleDef{{Name: "d", Handler: "k", Cron: "0 * * * *"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateDown(ctx, back); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if !revisionsKeyed(t, s) {
		t.Error("down: easyjob_task_revisions has no foreign key")
	}
	if key := auditKey(t, s); key != "id" || !tableExists(t, s, "easyjob_audit_group_idx") {
		t.Errorf("down: the audit log's key is (%s), want (id) and its group index", key)
	}
	if rs, err := s.Revisions(ctx, "g", "d"); err != nil || len(rs) != 1 {
		t.Errorf("down: revisions of d = %+v, %v; want its creation", rs, err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}

// revisionsKeyed reports whether easyjob_task_revisions has its foreign key
// to the tasks.
func revisionsKeyed(t *testing.T, s *postgres.Store) bool {
	t.Helper()
	var ok bool
	if err := s.DB().QueryRowContext(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_constraint
WHERE conrelid = to_regclass('easyjob_task_revisions') AND contype = 'f')`).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// auditKey returns the columns of the audit log's primary key, comma
// separated.
func auditKey(t *testing.T, s *postgres.Store) string {
	t.Helper()
	var cols string
	if err := s.DB().QueryRowContext(context.Background(), `SELECT string_agg(a.attname, ', ' ORDER BY k.i)
FROM pg_index x
CROSS JOIN unnest(x.indkey) WITH ORDINALITY AS k(attnum, i)
JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
WHERE x.indrelid = to_regclass('easyjob_audit') AND x.indisprimary`).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	return cols
}
