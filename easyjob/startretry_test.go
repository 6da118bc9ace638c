package easyjob

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
	"github.com/easyjob-go/easyjob/strategy"
)

// TestRunWaitsForDatabaseAtStart: a service whose database is down when
// it starts does not die with it: Run retries until the database answers,
// Health says why it is not ready meanwhile, and the node then runs its
// tasks (issue 30, item 9).
func TestRunWaitsForDatabaseAtStart(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	path, via := pgtest.NewSilentPath(t, dsn)
	path.Refuse()

	cfg := fastConfig(nil, "boot")
	cfg.DSN = via
	var l ledger
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register("tick", "* * * * * *", l.job(nil)); err != nil {
		t.Fatal(err)
	}
	run := runBackground(t, s)

	waitFor(t, 10*time.Second, "Health to report the database not answering", func() bool {
		h := s.Health()
		return h.State == StateStarting && strings.Contains(h.Reason, "database not answering at start")
	})
	select {
	case <-run.ended:
		t.Fatalf("Run returned while the database was down: %v", run.err)
	default:
	}
	path.Heal()
	waitFor(t, 15*time.Second, "a fire once the database answered", func() bool { return l.count("tick") > 0 })
	if h := s.Health(); h.State != StateRunning {
		t.Fatalf("Health = %+v, want running", h)
	}
}

// TestRunFailFast: with FailFast, a database that does not answer at
// start is Run's error; without it, a cancel during the retries ends Run
// with the last error.
func TestRunFailFast(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	path, via := pgtest.NewSilentPath(t, dsn)
	path.Refuse()
	for _, failFast := range []bool{true, false} {
		cfg := fastConfig(nil, "boot")
		cfg.DSN, cfg.FailFast = via, failFast
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Register("tick", "* * * * * *", func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		if !failFast {
			waitFor(t, 10*time.Second, "a failed start", func() bool {
				return strings.Contains(s.Health().Reason, "database not answering")
			})
			cancel()
		}
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("FailFast=%v: Run returned nil with the database down", failFast)
			}
			if !failFast && !strings.Contains(err.Error(), "stopped before the database answered") {
				t.Fatalf("Run after cancel: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("FailFast=%v: Run still running 10s on", failFast)
		}
		cancel()
	}
}

// TestRetryStartKinds: what waiting cannot fix is not retried.
func TestRetryStartKinds(t *testing.T) {
	for _, c := range []struct {
		err   error
		retry bool
	}{
		{errors.New("dial tcp 127.0.0.1:5432: connect: connection refused"), true},
		{&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, true},
		{&pgconn.PgError{Code: "28P01", Message: "password authentication failed"}, false},
		{repository.ErrSchemaTooNew, false},
		{ErrInvalidConfig, false},
		{strategy.ErrUnknownStrategy, false},
	} {
		if got := retryStart(c.err); got != c.retry {
			t.Errorf("retryStart(%v) = %v, want %v", c.err, got, c.retry)
		}
	}
}
