// Package pgtest gives tests a PostgreSQL database of their own.
//
// Tests find the server through EASYJOB_TEST_DSN (default
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable). When no
// server answers, tests are skipped with a loud message, except in CI
// (CI=true), where they fail: a green CI must mean the Postgres tests ran.
// Start a local server with ../shared/ci-postgres.sh.
//
// NewDatabase and NewStore create a fresh database per test (isolation at
// the cost of a CREATE DATABASE, some tens of milliseconds). SharedDatabase
// creates one database per test binary for cheap reuse; tests sharing it
// keep apart by using distinct group names. Packages that use pgtest call
// pgtest.Main from TestMain, which drops the shared database after the
// tests and checks for leaked goroutines:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"go.uber.org/goleak"

	"github.com/easyjob-go/easyjob/repository/postgres"
)

// DefaultDSN is the server tests use when EASYJOB_TEST_DSN is not set.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// howTo is appended to every "no server" message.
const howTo = "start one with ../shared/ci-postgres.sh or set EASYJOB_TEST_DSN"

// DSN returns the DSN of the test server's maintenance database.
func DSN() string {
	if dsn := os.Getenv("EASYJOB_TEST_DSN"); dsn != "" {
		return dsn
	}
	return DefaultDSN
}

// reach is probed once per binary: a missing server then costs one ~3 s
// timeout, not one per test.
var reach struct {
	once sync.Once
	err  error
}

// requireServer skips (or, in CI, fails) tb when no server answers.
func requireServer(tb testing.TB) {
	tb.Helper()
	reach.once.Do(func() {
		reach.err = withAdmin(3*time.Second, func(ctx context.Context, db *sql.DB) error {
			return db.PingContext(ctx)
		})
	})
	if reach.err == nil {
		return
	}
	msg := fmt.Sprintf("pgtest: NO POSTGRESQL at %s (%v): %s", postgres.RedactDSN(DSN()), reach.err, howTo)
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// withAdmin runs f on a short-lived pool to the maintenance database. It
// is closed at once so no pool goroutines outlive the call (goleak).
func withAdmin(timeout time.Duration, f func(ctx context.Context, db *sql.DB) error) error {
	cfg, err := pgx.ParseConfig(DSN())
	if err != nil {
		return err
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > timeout {
		cfg.ConnectTimeout = timeout
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return f(ctx, db)
}

// NewDatabase creates a fresh, empty database on the test server, returns
// its DSN and drops it when tb ends.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	requireServer(tb)
	name, dsn, err := createDatabase()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		if err := dropDatabase(name); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return dsn
}

// NewStore returns a migrated store on a fresh database, closed and
// dropped when tb ends.
func NewStore(tb testing.TB) *postgres.Store {
	tb.Helper()
	return OpenStore(tb, NewDatabase(tb))
}

// OpenStore opens and migrates a store on dsn and closes it when tb ends.
func OpenStore(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		tb.Fatalf("pgtest: migrate: %v", err)
	}
	return s
}

// shared is the per-binary database of SharedDatabase.
var shared struct {
	once sync.Once
	name string
	dsn  string
	err  error
}

// SharedDatabase returns the DSN of one database created lazily for the
// whole test binary and dropped by Main. It is not migrated: call
// OpenStore (which migrates) or postgres.Migrate. Tests sharing it must
// use distinct group names.
func SharedDatabase(tb testing.TB) string {
	tb.Helper()
	requireServer(tb)
	shared.once.Do(func() {
		shared.name, shared.dsn, shared.err = createDatabase()
	})
	if shared.err != nil {
		tb.Fatalf("pgtest: shared database: %v", shared.err)
	}
	return shared.dsn
}

// Main runs the tests, drops the shared database, then fails the binary if
// goroutines leaked (goleak, with opts), and exits.
func Main(m *testing.M, opts ...goleak.Option) {
	code := m.Run()
	if shared.name != "" {
		if err := dropDatabase(shared.name); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			code = max(code, 1)
		}
	}
	if code == 0 {
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// createDatabase creates easyjob_test_<pid>_<random>; the pid tells which
// test binary left a database behind if one was killed before cleanup.
func createDatabase() (name, dsn string, err error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	name = fmt.Sprintf("easyjob_test_%d_%s", os.Getpid(), hex.EncodeToString(b[:]))
	err = withAdmin(30*time.Second, func(ctx context.Context, db *sql.DB) error {
		_, err := db.ExecContext(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		return err
	})
	if err != nil {
		return "", "", fmt.Errorf("create database %s: %w", name, err)
	}
	dsn, err = postgres.WithDatabase(DSN(), name)
	return name, dsn, err
}

// dropDatabase drops name, disconnecting anything still connected.
func dropDatabase(name string) error {
	err := withAdmin(30*time.Second, func(ctx context.Context, db *sql.DB) error {
		_, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		return err
	})
	if err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}
