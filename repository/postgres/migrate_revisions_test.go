package postgres_test

import (
	"context"
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestMigrateTaskRevisions upgrades a database written before 0012 (at version 11): each
// runtime schedule gets its current definition as a revision (via
// "migration"), a registered task none. Down again, the table goes and
// the tasks stay.
func TestMigrateTaskRevisions(t *testing.T) {
	s := openRaw(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateDown(ctx, postgres.LatestSchemaVersion()-11); err != nil {
		t.Fatal(err)
	}
	if tableExists(t, s, "easyjob_task_revisions") {
		t.Fatal("easyjob_task_revisions survived the down migration")
	}
	exec := func(q string) {
		t.Helper()
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO easyjob_tasks (group_name, name, handler, dynamic, cron, code_cron, args, options, revision, status, next_start_time)
VALUES ('g', 'dyn', 'mailer', true, '0 * * * *', '0 * * * *', '{"to": "ops"}', '{"max_retries": 2}', 4, 'pending', now()),
       ('g', 'reg', 'reg', false, '0 * * * *', '0 * * * *', NULL, '{}', 1, 'pending', now())`)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate up over existing rows: %v", err)
	}
	rs, err := s.Revisions(ctx, "g", "dyn")
	if err != nil || len(rs) != 1 {
		t.Fatalf("revisions of the schedule = %+v, %v; want its current definition", rs, err)
	}
	r := rs[0]
	if r.Revision != 4 || r.Handler != "mailer" || r.Cron != "0 * * * *" || r.Args != `{"to": "ops"}` ||
		r.Options != (repository.TaskOptions{MaxRetries: 2}) || r.Actor != (repository.Actor{Via: "migration"}) || r.ChangedAt.IsZero() {
		t.Errorf("backfilled revision = %+v", r)
	}
	if rs, err := s.Revisions(ctx, "g", "reg"); err != nil || len(rs) != 0 {
		t.Errorf("revisions of the registered task = %+v, %v; want none", rs, err)
	}
	if err := s.MigrateDown(ctx, postgres.LatestSchemaVersion()-11); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	if !taskRowExists(t, s, "g", "dyn") {
		t.Fatal("the schedule is gone after down")
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}
