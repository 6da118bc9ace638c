package easyjob

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// pgStore returns a Postgres store on this test binary's shared database
// and a group name of the test's own, so tests never see each other.
func pgStore(t *testing.T) (*postgres.Store, string) {
	t.Helper()
	s := pgtest.OpenStore(t, pgtest.SharedDatabase(t))
	return s, groupFor(t)
}

// pgStoreAdmin returns a separate connection pool on the shared database,
// for statements a test runs behind the nodes' backs.
func pgStoreAdmin(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", pgtest.SharedDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func groupFor(t *testing.T) string {
	return strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}
