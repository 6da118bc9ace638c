package postgres_test

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository"
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
