package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestKeptFinishIsHOT checks the write path's premise: a finish that
// keeps its claim changes no indexed column of easyjob_tasks, so
// PostgreSQL updates the row in place (HOT, no index entries). It fails
// when an index comes to cover a column such a finish writes. A task's
// first finish sets last_status, which the overview's partial index
// (easyjob_tasks_notable_idx) reads, as does a change between success
// and failure; the fires after that, which are nearly all of them, are
// what is measured.
func TestKeptFinishIsHOT(t *testing.T) {
	db, err := sql.Open("pgx", pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	db.SetMaxOpenConns(1) // one backend: its statistics are flushed on demand below
	s := postgres.New(db)
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	node, err := s.RegisterNode(ctx, "g", "n", 1)
	if err != nil {
		t.Fatal(err)
	}
	now, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const tasks, rounds = 4, 3
	defs := make([]repository.TaskDef, tasks)
	refs := make([]repository.TaskRef, tasks)
	for i := range defs {
		defs[i] = repository.TaskDef{Name: fmt.Sprintf("t%d", i), Cron: "* * * * * *", NextStartTime: now}
	}
	rows, err := s.UpsertTasks(ctx, "g", defs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		refs[i] = r.Ref()
	}
	held, err := s.Claim(ctx, node.ID, refs)
	if err != nil || len(held) != tasks {
		t.Fatalf("claim: %d of %d, %v", len(held), tasks, err)
	}
	updates := func() (all, hot int64) {
		t.Helper()
		if _, err := db.ExecContext(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
WHERE relname = 'easyjob_tasks'`).Scan(&all, &hot); err != nil {
			t.Fatal(err)
		}
		return all, hot
	}
	var all0, hot0 int64
	for round := 0; round <= rounds; round++ {
		if round == 1 { // round 0 gave each task its first last_status
			all0, hot0 = updates()
		}
		fs := make([]repository.Finish, tasks)
		for i, h := range held {
			fs[i] = repository.Finish{
				Claim: h.Claim(), Revision: h.Revision, Status: repository.ExecSucceeded, Error: "",
				Next: h.NextStartTime.Add(time.Second), NextAttempt: 1, Cron: h.Cron, Keep: true,
				Run: &repository.Execution{ScheduledAt: h.NextStartTime, Attempt: 1}, Ran: time.Millisecond,
			}
		}
		res, err := s.Finish(ctx, fs)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Err != nil || r.Task.Status != repository.TaskDoing {
				t.Fatalf("round %d finish %d: %+v", round, i, r)
			}
			held[i] = r.Task
		}
	}
	all1, hot1 := updates()
	if all1-all0 != tasks*rounds || hot1-hot0 != tasks*rounds {
		t.Fatalf("%d kept finishes made %d updates, %d of them HOT; want all HOT", tasks*rounds, all1-all0, hot1-hot0)
	}
}
