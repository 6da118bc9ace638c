package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository/postgres/pgbouncer"
)

// RequirePgBouncerEnv set to 1 makes a test that needs pgbouncer fail,
// not skip, when the program is missing (CI sets it after installing
// Debian's package).
const RequirePgBouncerEnv = "EASYJOB_REQUIRE_PGBOUNCER"

// PgBouncer is a private pgbouncer in pool_mode=transaction in front of
// the test server (pgbouncer.Bouncer).
type PgBouncer = pgbouncer.Bouncer

// NewPgBouncer starts a pgbouncer (Debian's package) in transaction
// pooling mode on a free port in front of the test server, forwarding
// every database name, and stops it (waiting for the process) when tb
// ends. Without the pgbouncer program the test is skipped, or fails
// when EASYJOB_REQUIRE_PGBOUNCER=1. Point a DSN of the test server at it
// with ViaPgBouncer.
func NewPgBouncer(tb testing.TB, o pgbouncer.Options) *PgBouncer {
	tb.Helper()
	requireServer(tb)
	if _, err := pgbouncer.Find(); err != nil {
		if os.Getenv(RequirePgBouncerEnv) == "1" {
			tb.Fatalf("pgtest: %v (%s=1)", err, RequirePgBouncerEnv)
		}
		tb.Skipf("pgtest: NO PGBOUNCER: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := pgbouncer.Start(ctx, DSN(), o)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("pgbouncer log: %s", b.LogTail(20))
		}
		b.Stop()
	})
	return b
}

// ViaPgBouncer returns dsn, a URL DSN of a database on the test server,
// pointed at b.
func ViaPgBouncer(tb testing.TB, b *PgBouncer, dsn string) string {
	tb.Helper()
	via, err := b.DSN(dsn)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return via
}
