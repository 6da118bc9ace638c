package easyjob

import (
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

func groupFor(t *testing.T) string {
	return strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}
