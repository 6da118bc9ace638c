package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestMigrateRuntimeSchedules upgrades a database written before 0011 (at
// version 10): its tasks run their own code (handler = name), at revision
// 1, and are due by it; their runs carry no arguments and revision 0. Down again, the
// runtime schedules (which the older schema cannot express) go with their
// history and the handler table; the registered tasks stay.
func TestMigrateRuntimeSchedules(t *testing.T) {
	s := openRaw(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateDown(ctx, postgres.LatestSchemaVersion()-10); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.DB().ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO easyjob_tasks (group_name, name, cron, code_cron, status, next_start_time)
VALUES ('g', 'old', '* * * * * *', '* * * * * *', 'pending', now() - interval '1 second')`)
	exec(`INSERT INTO easyjob_executions (task_id, node_id, scheduled_at, status, finished_at)
SELECT id, 7, now(), 'succeeded', now() FROM easyjob_tasks WHERE name = 'old'`)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate up over existing rows: %v", err)
	}
	old, err := s.Task(ctx, "g", "old")
	if err != nil || old.Handler != "old" || old.Dynamic || old.Revision != 1 || old.Args != "" || old.FireArgs != "" {
		t.Fatalf("upgraded row = %+v, %v; want handler = name, revision 1", old, err)
	}
	due, err := s.DueTasks(ctx, repository.DueQuery{Group: "g", Handlers: []string{"old"}, Window: time.Second})
	if err != nil || len(due.Tasks) != 1 {
		t.Fatalf("DueTasks by the backfilled handler = %+v, %v", due.Tasks, err)
	}
	xs, err := s.History(ctx, "g", "old", repository.HistoryFilter{})
	if err != nil || len(xs) != 1 || xs[0].Args != "" || xs[0].Revision != 0 {
		t.Fatalf("upgraded history = %+v, %v; want one run without arguments, revision 0", xs, err)
	}

	now, _ := s.Now(ctx)
	if _, err := s.CreateSchedules(ctx, "g", []repository.ScheduleDef{
		{Name: "dyn", Handler: "old", Cron: "* * * * * *", Args: `{"a": 1}`, NextStartTime: now},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.PublishHandlers(ctx, "g", []repository.HandlerDef{{Kind: "old"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateDown(ctx, postgres.LatestSchemaVersion()-10); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	var names []string
	if err := s.DB().NewSelect().Table("easyjob_tasks").Column("name").Order("name").Scan(ctx, &names); err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != "old" {
		t.Fatalf("tasks after down = %v, want the registered one only", names)
	}
	if tableExists(t, s, "easyjob_handlers") {
		t.Fatal("easyjob_handlers survived the down migration")
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}
