package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

var (
	_ repository.Store      = (*Store)(nil)
	_ repository.Notifier   = (*Store)(nil)
	_ repository.TxFinisher = (*Store)(nil)
)

// notifyChannel is the one LISTEN/NOTIFY channel of every group; the payload
// is the group name, so one listening connection per node is enough.
const notifyChannel = "easyjob"

// Store is a repository.Store on PostgreSQL. It is safe for concurrent use.
type Store struct {
	db     *bun.DB
	binary bool          // hot statements name pgx's exec mode (binaryMode)
	pooled atomic.Bool   // a transaction pooler is in front (Pooler)
	prio   *priorityConn // heartbeats and live views
	opts   optionsMemo   // decoded task options, by their JSON
	probe  time.Duration // LISTEN's probe interval; 0: listenProbe (tests set it)
	// pruneIDs is the largest group whose ids pruneOlder sends; 0:
	// maxPruneIDs, < 0: none (tests set it).
	pruneIDs int
	txs      txGate // the run transactions open (BeginFinish)
	// owned says whether Close closes db: true only when Open created it.
	owned bool
}

// connectTimeout bounds a connection attempt when the DSN sets no
// connect_timeout.
const connectTimeout = 5 * time.Second

// keepAlive probes an idle connection after 15 s, then every 5 s, and
// gives it up after 3 probes without an answer.
var keepAlive = net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3}

// MaxConns bounds the connections of a pool opened by Open: enough for the
// default 10 workers plus the node's loops and its LISTEN connection.
const MaxConns = 20

// Open connects to dsn (URL or key=value form) with pgx and checks the
// connection. Close closes the pool it opened. The DSN may name
// PoolerParam (easyjob_pooler=transaction), as WithPooler does.
//
// Unless the DSN names default_query_exec_mode itself, the pool uses pgx's
// simple protocol: bun interpolates (and escapes) arguments on the client,
// so every statement text is unique and pgx's default prepared-statement
// cache would only cost an extra round trip per query and fill the server
// with one-use prepared statements.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	dsn, pooler, err := splitPooler(dsn)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: parse dsn %s: %w", RedactDSN(dsn), err)
	}
	if !strings.Contains(dsn, "default_query_exec_mode") {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	if !strings.Contains(dsn, "connect_timeout") {
		cfg.ConnectTimeout = connectTimeout
	}
	// Idle connections (the pool's, LISTEN's) on a path that went silent
	// are found dead by TCP keepalives within a minute, not the kernel's
	// default two hours; calls in flight are bounded by their contexts.
	cfg.DialFunc = (&net.Dialer{KeepAliveConfig: keepAlive}).DialContext
	sqlDB := stdlib.OpenDB(*cfg)
	// database/sql keeps only 2 idle connections by default: with a pool of
	// workers every statement beyond two would dial a new backend (tens of
	// milliseconds). Keep as many idle as may be open.
	sqlDB.SetMaxOpenConns(MaxConns)
	sqlDB.SetMaxIdleConns(MaxConns)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("easyjob/postgres: connect %s: %w", RedactDSN(dsn), err)
	}
	s := NewBun(bun.NewDB(sqlDB, pgdialect.New()), append([]Option{WithPooler(pooler)}, opts...)...)
	s.owned = true
	s.binary = s.binary && !strings.Contains(dsn, "default_query_exec_mode")
	return s, nil
}

// New wraps a *sql.DB opened with the pgx driver ("pgx", pgx/v5/stdlib).
// The caller owns db: Close does not close it.
func New(db *sql.DB, opts ...Option) *Store {
	return NewBun(bun.NewDB(db, pgdialect.New()), opts...)
}

// NewBun wraps a bun.DB using pgdialect over pgx. The caller owns db: Close
// does not close it.
func NewBun(db *bun.DB, opts ...Option) *Store {
	s := &Store{db: db, binary: binaryMode(db.DB), prio: &priorityConn{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// DB returns the underlying bun.DB, for tools (the CLI's status queries).
func (s *Store) DB() *bun.DB { return s.db }

// Close returns the heartbeat connection to the pool and closes the pool
// if Open created it.
func (s *Store) Close() error {
	s.prio.close()
	if !s.owned {
		return nil
	}
	return s.db.Close()
}

// Now returns the database clock, the only clock that decides anything.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := s.db.QueryRowContext(ctx, "SELECT now()").Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("easyjob/postgres: now: %w", err)
	}
	return now.UTC(), nil
}
