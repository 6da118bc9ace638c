package dashboard

import (
	"os"
	"testing"

	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestMain runs the tests, or, when started by the browser test as a node
// process (nodeEnv set), one easyjob node.
func TestMain(m *testing.M) {
	if spec := os.Getenv(nodeEnv); spec != "" {
		os.Exit(runNodeProcess(spec))
	}
	pgtest.Main(m)
}
