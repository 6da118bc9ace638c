package postgres

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Pooler says what sits between the nodes and PostgreSQL. A transaction
// pooler (PgBouncer in pool_mode=transaction, or any proxy that hands a
// server connection to a client only for one transaction) keeps no
// session state: a statement prepared on one server connection is not
// there for the next, and LISTEN hears nothing once its transaction ends.
type Pooler int

const (
	// PoolerNone is a direct connection, or a session pooler: the hot
	// statement is prepared once per connection and notifications wake
	// the loader.
	PoolerNone Pooler = iota
	// PoolerTransaction is a transaction pooler: statements are parsed
	// anew each time (unnamed, described once) and the nodes poll instead
	// of listening. Only transaction-scoped advisory locks are used in
	// either mode.
	PoolerTransaction
)

// String is the DSN parameter's value for p.
func (p Pooler) String() string {
	if p == PoolerTransaction {
		return "transaction"
	}
	return "none"
}

// PoolerParam is the DSN parameter that tells Open what sits in front of
// PostgreSQL: easyjob_pooler=transaction (or none). Open removes it before
// connecting, so the server or the pooler never sees it.
const PoolerParam = "easyjob_pooler"

// ParsePooler reads a PoolerParam value.
func ParsePooler(s string) (Pooler, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "none", "session":
		return PoolerNone, nil
	case "transaction":
		return PoolerTransaction, nil
	}
	return PoolerNone, fmt.Errorf("easyjob/postgres: %s=%q: want transaction or none", PoolerParam, s)
}

// Option configures a Store made by Open, New or NewBun.
type Option func(*Store)

// WithPooler tells the store what sits in front of PostgreSQL. Without
// it, a store that meets a transaction pooler finds out by itself at its
// first hot statement (the prepared statement is missing on the next
// server connection) and switches to PoolerTransaction's way for good.
func WithPooler(p Pooler) Option {
	return func(s *Store) {
		if p == PoolerTransaction {
			s.pooled.Store(true)
		}
	}
}

var kvPooler = regexp.MustCompile(`(?i)\b` + PoolerParam + `\s*=\s*(\S*)`)

// splitPooler removes PoolerParam from dsn (URL or key=value form) and
// returns what it said.
func splitPooler(dsn string) (string, Pooler, error) {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil || !u.Query().Has(PoolerParam) {
			return dsn, PoolerNone, nil //nolint:nilerr // pgx reports the unparsable DSN
		}
		q := u.Query()
		p, err := ParsePooler(q.Get(PoolerParam))
		q.Del(PoolerParam)
		u.RawQuery = q.Encode()
		return u.String(), p, err
	}
	m := kvPooler.FindStringSubmatch(dsn)
	if m == nil {
		return dsn, PoolerNone, nil
	}
	p, err := ParsePooler(strings.Trim(m[1], `'`))
	return strings.TrimSpace(kvPooler.ReplaceAllString(dsn, "")), p, err
}

// execMode is how the hot statement is sent: prepared once per
// connection (the server parses and plans the large finish statement
// once, not per batch: about a tenth of the database's CPU per fire), or,
// behind a transaction pooler, unnamed with its description cached.
func (s *Store) execMode() pgx.QueryExecMode {
	if s.pooled.Load() {
		return pgx.QueryExecModeCacheDescribe
	}
	return pgx.QueryExecModeCacheStatement
}

// lostPrepared reports whether err says a prepared statement is missing
// or already exists on the server connection: what a transaction pooler
// does to session state. Nothing of the statement ran.
func lostPrepared(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return pe.Code == "26000" || pe.Code == "42P05"
}

// Pooler reports what the store takes to be in front of PostgreSQL.
func (s *Store) Pooler() Pooler {
	if s.pooled.Load() {
		return PoolerTransaction
	}
	return PoolerNone
}
