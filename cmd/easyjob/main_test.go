package main

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestMain drops pgtest's shared database after the tests and checks for
// leaked goroutines.
func TestMain(m *testing.M) { pgtest.Main(m) }
