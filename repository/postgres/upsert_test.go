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

	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback() }()
	// What a running node's claim or finish statement holds on its row.
	if _, err := holder.ExecContext(ctx, `SELECT id FROM easyjob_tasks WHERE id = $1 FOR NO KEY UPDATE`, int64(rows[0].ID)); err != nil {
		t.Fatal(err)
	}

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
