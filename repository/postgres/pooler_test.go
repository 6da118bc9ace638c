package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestPoolerParam checks that the DSN parameter is read in both DSN
// forms and refused when it names no known pooler.
func TestPoolerParam(t *testing.T) {
	ctx := context.Background()
	base := pgtest.SharedDatabase(t)
	for _, tc := range []struct {
		dsn     string
		want    postgres.Pooler
		wantErr bool
	}{
		{base, postgres.PoolerNone, false},
		{withParam(base, "easyjob_pooler=transaction"), postgres.PoolerTransaction, false},
		{withParam(base, "easyjob_pooler=none"), postgres.PoolerNone, false},
		{withParam(base, "easyjob_pooler=statement"), postgres.PoolerNone, true},
		{"host=127.0.0.1 easyjob_pooler=bogus", postgres.PoolerNone, true},
	} {
		s, err := postgres.Open(ctx, tc.dsn)
		if tc.wantErr {
			if err == nil {
				_ = s.Close()
				t.Errorf("Open(%s) accepted an unknown pooler", postgres.RedactDSN(tc.dsn))
			}
			continue
		}
		if err != nil {
			t.Fatalf("Open(%s): %v", postgres.RedactDSN(tc.dsn), err)
		}
		if got := s.Pooler(); got != tc.want {
			t.Errorf("Open(%s).Pooler() = %v, want %v", postgres.RedactDSN(tc.dsn), got, tc.want)
		}
		_ = s.Close()
	}
}

// withParam adds a key=value parameter to a URL or key=value DSN.
func withParam(dsn, kv string) string {
	if strings.Contains(dsn, "?") {
		return dsn + "&" + kv
	}
	if strings.Contains(dsn, "://") {
		return dsn + "?" + kv
	}
	return dsn + " " + kv
}

// TestLostPreparedStatement stands in for a transaction pooler: the hot
// statement, prepared on the store's one connection, disappears from it
// (as when a pooler hands the next transaction another server
// connection). The finish must still be written, once, and the store
// must stop preparing statements and stop listening.
func TestLostPreparedStatement(t *testing.T) {
	db, err := sql.Open("pgx", pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	db.SetMaxOpenConns(1)
	s := postgres.New(db)
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	finish := heldTask(t, s)
	finish()
	if s.Pooler() != postgres.PoolerNone {
		t.Fatalf("Pooler() = %v before any statement was lost", s.Pooler())
	}
	if _, err := db.ExecContext(ctx, `DEALLOCATE ALL`); err != nil {
		t.Fatal(err)
	}
	finish()
	if s.Pooler() != postgres.PoolerTransaction {
		t.Fatalf("Pooler() = %v after the prepared statement was lost, want transaction", s.Pooler())
	}
	finish()
	var runs int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM easyjob_executions`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != 3 {
		t.Fatalf("%d runs recorded for 3 finishes", runs)
	}
	if err := s.Listen(ctx, "g", func() {}); !errors.Is(err, repository.ErrNotifyUnavailable) {
		t.Fatalf("Listen behind a transaction pooler = %v, want ErrNotifyUnavailable", err)
	}
}

// heldTask claims an every-second task in group g on a new node of s and
// returns a func that finishes its fire (keeping the claim), failing t
// unless the finish is written.
func heldTask(t *testing.T, s *postgres.Store) func() {
	t.Helper()
	ctx := context.Background()
	node, err := s.RegisterNode(ctx, "g", "n", 1)
	if err != nil {
		t.Fatal(err)
	}
	now, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.UpsertTasks(ctx, "g", []repository.TaskDef{{Name: "t", Cron: "* * * * * *", NextStartTime: now}})
	if err != nil {
		t.Fatal(err)
	}
	held, err := s.Claim(ctx, node.ID, []repository.TaskRef{rows[0].Ref()})
	if err != nil || len(held) != 1 {
		t.Fatalf("claim: %d, %v", len(held), err)
	}
	task := held[0]
	return func() {
		t.Helper()
		res, err := s.Finish(ctx, []repository.Finish{{
			Claim: task.Claim(), Revision: task.Revision, Status: repository.ExecSucceeded,
			Next: task.NextStartTime.Add(time.Second), NextAttempt: 1, Cron: task.Cron, Keep: true,
			Run: &repository.Execution{ScheduledAt: task.NextStartTime, Attempt: 1}, Ran: time.Millisecond,
		}})
		if err != nil || res[0].Err != nil {
			t.Fatalf("finish: %v, %+v", err, res)
		}
		task = res[0].Task
	}
}
