package harness

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestMain checks for leaked goroutines after the tests.
func TestMain(m *testing.M) { pgtest.Main(m) }
