package postgres_test

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
	"github.com/easyjob-go/easyjob/repository/storetest"
)

// TestConformance runs the store contract suite against PostgreSQL. The
// subtests share one database (they use distinct groups); each gets its
// own Store, so pools and listeners are not shared between them.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) repository.Store {
		return pgtest.OpenStore(t, pgtest.SharedDatabase(t))
	})
}

// TestConformanceLargeGroups runs the suite with the store acting as it
// does on groups too large to list their task ids (pruning by age filters
// each run by its task's group instead).
func TestConformanceLargeGroups(t *testing.T) {
	storetest.Run(t, func(t *testing.T) repository.Store {
		s := pgtest.OpenStore(t, pgtest.SharedDatabase(t))
		postgres.SetPruneIDs(s, -1)
		return s
	})
}

// TestConformancePooled runs the suite with the store told by its DSN
// that a transaction pooler is in front: no prepared statements, no
// LISTEN (the Listen test skips).
func TestConformancePooled(t *testing.T) {
	storetest.Run(t, func(t *testing.T) repository.Store {
		s := pgtest.OpenStore(t, withParam(pgtest.SharedDatabase(t), postgres.PoolerParam+"=transaction"))
		if s.Pooler() != postgres.PoolerTransaction {
			t.Fatalf("Pooler() = %v, want transaction", s.Pooler())
		}
		return s
	})
}
