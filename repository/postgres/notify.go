package postgres

import (
	"context"
	"crypto/rand"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/easyjob-go/easyjob/repository"
)

// Listen wakes the caller for every notification of group until ctx is
// done (returning nil) or the connection fails (returning the error; the
// caller restarts it with backoff and polls meanwhile).
//
// Behind a transaction pooler (Pooler) it returns
// repository.ErrNotifyUnavailable at once: the session would not last.
//
// LISTEN needs one session that stays open, so a connection is taken out
// of the pool for the whole call and driven with pgx directly (database/sql
// has no notification API). When Listen returns, that connection is always
// discarded, never put back: a pooled session still LISTENing would buffer
// notifications nobody reads, and one interrupted by ctx is unusable.
func (s *Store) Listen(ctx context.Context, group string, wake func()) error {
	if s.pooled.Load() {
		return repository.ErrNotifyUnavailable
	}
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("easyjob/postgres: listen: %w", err)
	}
	defer conn.Close()

	var listenErr error
	_ = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			listenErr = fmt.Errorf("driver connection is %T, not pgx/v5/stdlib", dc)
			return driver.ErrBadConn
		}
		c := sc.Conn()
		if _, err := c.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
			listenErr = err
			return driver.ErrBadConn
		}
		if err := s.hearSelf(ctx, c, group, wake); err != nil {
			listenErr = err
			return driver.ErrBadConn
		}
		for {
			n, err := waitNotification(ctx, c, s.probeAfter())
			if err != nil {
				listenErr = err
				return driver.ErrBadConn
			}
			if n != nil && n.Payload == group {
				wake()
			}
			if s.pooled.Load() { // found out since (queryEach)
				listenErr = repository.ErrNotifyUnavailable
				return driver.ErrBadConn
			}
		}
	})
	if ctx.Err() != nil {
		return nil
	}
	if listenErr == nil {
		listenErr = errors.New("connection closed")
	}
	return fmt.Errorf("easyjob/postgres: listen: %w", listenErr)
}

// listenProbe is how long a LISTEN session waits for a notification
// before it checks that the server still answers. A path that goes
// silent (packets dropped, sockets open) never ends a read by itself:
// without the probe, the session would wait forever, and the node would
// not hear a notification again once the path heals.
const listenProbe = 10 * time.Second

// probeTimeout bounds the probe's round trip.
const probeTimeout = 5 * time.Second

// probeAfter is listenProbe, or the store's own (tests).
func (s *Store) probeAfter() time.Duration {
	if s.probe > 0 {
		return s.probe
	}
	return listenProbe
}

// waitNotification waits up to probe for a notification on c. When none
// came it pings the server, and returns (nil, nil) if it answered.
func waitNotification(ctx context.Context, c *pgx.Conn, probe time.Duration) (*pgconn.Notification, error) {
	wctx, cancel := context.WithTimeout(ctx, probe)
	n, err := c.WaitForNotification(wctx)
	cancel()
	if err == nil || ctx.Err() != nil || !pgconn.Timeout(err) {
		return n, err
	}
	// A timed-out wait leaves the connection usable (pgconn closes it on
	// any other error): probe it.
	pctx, cancel := context.WithTimeout(ctx, min(probe, probeTimeout))
	defer cancel()
	if err := c.Ping(pctx); err != nil {
		return nil, fmt.Errorf("no answer to a probe after %v without a notification: %w", probe, err)
	}
	return nil, nil
}

// hearCheck bounds the wait for the listener's own check notification
// (hearSelf): on a direct connection or through a session pooler it
// arrives within milliseconds of the NOTIFY's commit.
const hearCheck = 2 * time.Second

// hearSelf sends a notification of its own from another connection of the
// pool and waits for it on c, the session that just ran LISTEN. Behind a
// transaction pooler that the store was not told of, the server session
// that ran LISTEN went back to the pooler with the statement, and c will
// never hear a thing: after two checks missed the store takes the pooler
// for found (as queryEach does on a lost prepared statement) and the
// caller polls.
// Notifications of group heard meanwhile wake the caller.
func (s *Store) hearSelf(ctx context.Context, c *pgx.Conn, group string, wake func()) error {
	// Two checks, each its own notification: one missed by a server too
	// busy to deliver it within hearCheck must not turn prepared
	// statements and notifications off for good.
	for range 2 {
		heard, err := s.hearOnce(ctx, c, group, wake)
		if heard || err != nil {
			return err
		}
	}
	s.pooled.Store(true)
	return repository.ErrNotifyUnavailable
}

// hearOnce sends one check notification and waits hearCheck for it on c.
func (s *Store) hearOnce(ctx context.Context, c *pgx.Conn, group string, wake func()) (bool, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	payload := "easyjob/listen-check/" + hex.EncodeToString(b[:])
	if _, err := s.db.ExecContext(ctx, `SELECT pg_notify(?, ?)`, notifyChannel, payload); err != nil {
		return false, err
	}
	wctx, cancel := context.WithTimeout(ctx, hearCheck)
	defer cancel()
	for {
		n, err := c.WaitForNotification(wctx)
		switch {
		case err == nil && n.Payload == payload:
			return true, nil
		case err == nil:
			if n.Payload == group {
				wake()
			}
		case ctx.Err() == nil && pgconn.Timeout(err):
			return false, nil
		default:
			return false, err
		}
	}
}
