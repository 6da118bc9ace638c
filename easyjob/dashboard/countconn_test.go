package dashboard

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/easyjob-go/easyjob/repository/postgres"
)

// countingStore opens a postgres store on dsn whose every statement sent
// to the server is counted in n: the queries a dashboard costs.
func countingStore(t *testing.T, dsn string) (*postgres.Store, *atomic.Int64) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dsn, "default_query_exec_mode") { // as postgres.Open does
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	n := new(atomic.Int64)
	db := sql.OpenDB(countingConnector{stdlib.GetConnector(*cfg), n})
	db.SetMaxOpenConns(postgres.MaxConns)
	db.SetMaxIdleConns(postgres.MaxConns)
	s := postgres.New(db)
	t.Cleanup(func() {
		_ = s.Close()
		_ = db.Close()
	})
	return s, n
}

type countingConnector struct {
	driver.Connector
	n *atomic.Int64
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return countingConn{conn.(pgxConn), c.n}, nil
}

// pgxConn is what pgx's stdlib connection implements and database/sql uses.
type pgxConn interface {
	driver.Conn
	driver.QueryerContext
	driver.ExecerContext
	driver.ConnBeginTx
	driver.Pinger
	driver.SessionResetter
	driver.NamedValueChecker
}

// countingConn counts the statements of one connection.
type countingConn struct {
	pgxConn
	n *atomic.Int64
}

func (c countingConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	c.n.Add(1)
	return c.pgxConn.QueryContext(ctx, q, args)
}

func (c countingConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	c.n.Add(1)
	return c.pgxConn.ExecContext(ctx, q, args)
}
