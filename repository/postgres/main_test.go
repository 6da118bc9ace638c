package postgres_test

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestMain drops the shared test database and checks for goroutine leaks
// (a Listen or a pool left running) after all tests.
func TestMain(m *testing.M) { pgtest.Main(m) }
