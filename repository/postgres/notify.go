package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/stdlib"
)

// Listen wakes the caller for every notification of group until ctx is
// done (returning nil) or the connection fails (returning the error; the
// caller restarts it with backoff and polls meanwhile).
//
// LISTEN needs one session that stays open, so a connection is taken out
// of the pool for the whole call and driven with pgx directly (database/sql
// has no notification API). When Listen returns, that connection is always
// discarded, never put back: a pooled session still LISTENing would buffer
// notifications nobody reads, and one interrupted by ctx is unusable.
func (s *Store) Listen(ctx context.Context, group string, wake func()) error {
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
		for {
			n, err := c.WaitForNotification(ctx)
			if err != nil {
				listenErr = err
				return driver.ErrBadConn
			}
			if n.Payload == group {
				wake()
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
