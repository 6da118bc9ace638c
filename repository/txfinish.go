package repository

import (
	"context"
	"database/sql"
)

// TxFinisher is implemented by stores where a job's own writes can share
// the transaction that records its finish (PostgreSQL): the job's effects
// and its fenced finish commit together or not at all, so a fire whose
// effects live in the same database takes effect exactly once, across
// node death, partition and failover.
type TxFinisher interface {
	// BeginFinish opens the transaction of one run. ctx bounds the whole
	// transaction: cancelling it rolls the transaction back.
	BeginFinish(ctx context.Context) (FinishTx, error)
}

// FinishTx is one run's transaction.
type FinishTx interface {
	// Tx is the transaction the job writes through.
	Tx() *sql.Tx
	// Commit applies f in the transaction, as Finish would, and commits
	// when f's fence holds. When it does not, the transaction is rolled
	// back (the job's writes with it) and the result's Err wraps
	// ErrClaimLost; nothing is written. err is not nil when the
	// transaction could not be finished: rolled back, or, when the commit
	// itself failed, in an unknown state.
	Commit(ctx context.Context, f Finish) (res FinishResult, err error)
	// Rollback abandons the transaction and the job's writes; after a
	// Commit it does nothing.
	Rollback() error
}
