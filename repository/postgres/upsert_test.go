package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestUpsertUnchangedLocksNoRow: a replica registering code that is
// already registered must not wait for the rows running nodes hold (a
// claim or finish statement in flight): it locks only the rows it
// changes. Here another transaction holds one task row while the same
// forest, with a different task changed, is registered again.
func TestUpsertUnchangedLocksNoRow(t *testing.T) {
	dsn := pgtest.SharedDatabase(t)
	ctx := context.Background()
	store := pgtest.OpenStore(t, dsn)
	group := fmt.Sprintf("pg-upsert-nolock-%d", time.Now().UnixNano())
	defs := []repository.TaskDef{
		{Name: "a", Cron: "* * * * * *"},
		{Name: "b", Cron: "* * * * * *"},
	}
	rows, err := store.UpsertTasks(ctx, group, defs)
	if err != nil {
		t.Fatal(err)
	}

	holdRow(t, dsn, rows[0].ID)

	// A deadline instead of blocking for good: the upsert must not wait
	// for the held row at all.
	within, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	defs[1].Cron = "*/2 * * * * *"
	got, err := store.UpsertTasks(within, group, defs)
	if err != nil {
		t.Fatalf("registering while a task row is held: %v", err)
	}
	if got[0].Version != rows[0].Version || got[0].Cron != "* * * * * *" {
		t.Fatalf("unchanged task rewritten: %+v", got[0])
	}
	if got[1].Cron != "*/2 * * * * *" {
		t.Fatalf("changed task: cron %q, want */2 * * * * *", got[1].Cron)
	}
}

// Removing a task locks its own subtree, not the group: while another
// transaction holds the row of an unrelated task, the removal goes through
// at once, with the task's descendants. A group of a million schedules
// would otherwise stall every claim and finish while one is removed.
func TestRemoveLocksOnlyItsSubtree(t *testing.T) {
	dsn := pgtest.SharedDatabase(t)
	ctx := context.Background()
	store := pgtest.OpenStore(t, dsn)
	group := fmt.Sprintf("pg-remove-nolock-%d", time.Now().UnixNano())
	rows, err := store.UpsertTasks(ctx, group, []repository.TaskDef{
		{Name: "other", Cron: "0 0 * * * *"},
		{Name: "root", Cron: "0 0 * * * *"},
		{Name: "child", Parent: "root"},
		{Name: "grandchild", Parent: "child"},
	})
	if err != nil {
		t.Fatal(err)
	}
	holdRow(t, dsn, rows[0].ID)

	within, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	removed, err := store.RemoveTask(within, group, "root", repository.Removal{})
	if err != nil {
		t.Fatalf("removing while another task's row is held: %v", err)
	}
	var names []string
	for _, r := range removed {
		names = append(names, r.Name)
	}
	if fmt.Sprint(names) != "[root child grandchild]" {
		t.Fatalf("removed %v, want [root child grandchild]", names)
	}
	left, err := store.Tasks(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].Name != "other" {
		t.Fatalf("left %+v, want only other", left)
	}
}

// holdRow holds task id's row until the test ends, as a running node's
// claim or finish statement does.
func holdRow(t *testing.T, dsn string, id repository.TaskID) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	holder, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Rollback() })
	if _, err := holder.ExecContext(context.Background(), `SELECT id FROM easyjob_tasks WHERE id = $1 FOR NO KEY UPDATE`, int64(id)); err != nil {
		t.Fatal(err)
	}
}
