package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestFinishTxLeavesConnections: the transactions of InTx runs hold at
// most half of the pool, so the node's own statements (start records,
// heartbeats, claims) always find a connection; a run's transaction waits
// for a slot instead. Without the bound, runs whose transactions hold the
// whole pool would wait on their start records, which wait on a connection.
func TestFinishTxLeavesConnections(t *testing.T) {
	s := pgtest.OpenStore(t, pgtest.NewDatabase(t))
	s.DB().SetMaxOpenConns(4) // room for 2 transactions
	ctx := context.Background()
	a, err := s.BeginFinish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.BeginFinish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if c, err := s.BeginFinish(short); !errors.Is(err, context.DeadlineExceeded) {
		if c != nil {
			_ = c.Rollback()
		}
		t.Fatalf("a third transaction on a pool of 4: %v, want it to wait for a slot", err)
	}
	if _, err := s.Now(ctx); err != nil { // the node's statements still run
		t.Fatalf("Now with two transactions open: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		c, err := s.BeginFinish(ctx)
		if err == nil {
			err = c.Rollback()
		}
		got <- err
	}()
	if err := a.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := a.Rollback(); err != nil { // twice frees one slot, once
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the waiting transaction: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a freed slot did not let the waiting transaction begin")
	}
	if err := b.Rollback(); err != nil {
		t.Fatal(err)
	}
}
