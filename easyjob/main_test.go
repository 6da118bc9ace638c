package easyjob

import (
	"database/sql"
	"fmt"
	"strings"
	"sync"
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

// groups names each test run's group: the test's name plus a number that
// differs between runs of one test (go test -count=N), so a repeated run
// never sees the rows of an earlier one on the shared database.
var groups = struct {
	sync.Mutex
	byTest map[*testing.T]string
	runs   map[string]int
}{byTest: map[*testing.T]string{}, runs: map[string]int{}}

// groupFor returns the group of this run of t (the same on every call).
func groupFor(t *testing.T) string {
	groups.Lock()
	defer groups.Unlock()
	if g, ok := groups.byTest[t]; ok {
		return g
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	groups.runs[name]++
	g := fmt.Sprintf("%s_%d", name, groups.runs[name])
	groups.byTest[t] = g
	return g
}
