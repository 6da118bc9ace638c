package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgbouncer"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
	"github.com/easyjob-go/easyjob/repository/storetest"
)

// TestConformancePgBouncer runs the suite through a real PgBouncer
// (Debian's) in pool_mode=transaction: once with the store told by its
// DSN (easyjob_pooler=transaction), once left to find out by itself.
// Migrations run through it too.
func TestConformancePgBouncer(t *testing.T) {
	b := pgtest.NewPgBouncer(t, pgbouncer.Options{})
	t.Run("Told", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) repository.Store {
			s := pgtest.OpenStore(t, withParam(pgtest.ViaPgBouncer(t, b, pgtest.SharedDatabase(t)), postgres.PoolerParam+"=transaction"))
			if s.Pooler() != postgres.PoolerTransaction {
				t.Fatalf("Pooler() = %v, want transaction", s.Pooler())
			}
			return s
		})
	})
	t.Run("Detected", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) repository.Store {
			return pgtest.OpenStore(t, pgtest.ViaPgBouncer(t, b, pgtest.SharedDatabase(t)))
		})
	})
}

// TestPgBouncerFoundAtFinish: a store not told of the PgBouncer in front
// finds it out at a finish whose prepared statement went missing (here
// PgBouncer's server connections are ended behind its back, as a server
// restart or server_lifetime does, so the next finish gets a server
// connection that never saw the statement). The finish is written once
// and the store reports the pooler. The database is migrated through
// PgBouncer.
func TestPgBouncerFoundAtFinish(t *testing.T) {
	b := pgtest.NewPgBouncer(t, pgbouncer.Options{})
	direct := pgtest.NewDatabase(t)
	s := pgtest.OpenStore(t, pgtest.ViaPgBouncer(t, b, direct))
	admin, err := sql.Open("pgx", direct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	ctx := context.Background()
	finish := heldTask(t, s)
	finishes := 0
	for s.Pooler() != postgres.PoolerTransaction {
		if finishes == 5 {
			t.Fatalf("Pooler() = %v after %d finishes, each on new server connections", s.Pooler(), finishes)
		}
		finish()
		finishes++
		if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		// PgBouncer drops the ended connections as it reads their end.
		time.Sleep(300 * time.Millisecond)
	}
	finish()
	finishes++
	var runs int
	if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM easyjob_executions`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != finishes {
		t.Fatalf("%d runs recorded for %d finishes", runs, finishes)
	}
	t.Logf("found at finish %d", finishes-1)
}
