package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/easyjob-go/easyjob/repository"
)

// BeginFinish opens the transaction of one run (repository.TxFinisher).
// It waits while half of the pool's connections hold run transactions
// (txGate).
func (s *Store) BeginFinish(ctx context.Context) (repository.FinishTx, error) {
	if err := s.txs.enter(ctx, txLimit(s.db.DB.Stats().MaxOpenConnections)); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: wait for a connection for a run's transaction: %w", err)
	}
	tx, err := s.db.DB.BeginTx(ctx, nil)
	if err != nil {
		s.txs.leave()
		return nil, fmt.Errorf("easyjob/postgres: begin a run's transaction: %w", err)
	}
	return &finishTx{s: s, tx: tx}, nil
}

// finishTx is a run's transaction; its Commit is the finish statement
// run inside it.
type finishTx struct {
	s    *Store
	tx   *sql.Tx
	done sync.Once // gives the gate's slot back once
}

// end gives the transaction's slot back (after a commit or a rollback).
func (t *finishTx) end() { t.done.Do(t.s.txs.leave) }

func (t *finishTx) Tx() *sql.Tx { return t.tx }

func (t *finishTx) Commit(ctx context.Context, f repository.Finish) (repository.FinishResult, error) {
	defer t.end()
	res, err := t.s.finish(ctx, []repository.Finish{f}, t.query)
	if err != nil {
		_ = t.tx.Rollback()
		return repository.FinishResult{}, fmt.Errorf("easyjob/postgres: finish in the run's transaction: %w", err)
	}
	if res[0].Err != nil { // the fence failed: the job's writes go too
		if err := t.tx.Rollback(); err != nil {
			return res[0], fmt.Errorf("easyjob/postgres: roll back a fenced run's transaction: %w", err)
		}
		return res[0], nil
	}
	if err := t.tx.Commit(); err != nil {
		return repository.FinishResult{}, fmt.Errorf("easyjob/postgres: commit a run's transaction (outcome unknown): %w", err)
	}
	return res[0], nil
}

func (t *finishTx) Rollback() error {
	defer t.end()
	if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("easyjob/postgres: roll back a run's transaction: %w", err)
	}
	return nil
}

// query runs q in the transaction (the text protocol of database/sql: a
// transaction's connection is not the pool's to borrow raw).
func (t *finishTx) query(ctx context.Context, q string, args, dest []any, each func() error) error {
	rows, err := t.tx.QueryContext(ctx, q, args...) //nolint:rowserrcheck // scanEach returns rows.Err()
	if err != nil {
		return err
	}
	defer rows.Close()
	return scanEach(rows, dest, each)
}
