package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The hot statement (Finish, once per fire) bypasses bun's formatting:
// bun writes every argument into the statement's text, so a batch of
// arrays became a long literal that the client formatted and the server
// parsed and planned afresh, and the returned timestamps came back as
// text. queryEach sends the arrays as parameters in PostgreSQL's binary
// format, prepared once per connection (execMode; unnamed with pgx's
// describe cache behind a transaction pooler), and reads results in
// binary.

// binaryMode reports whether db is pgx's database/sql driver, so that a
// pgx.QueryExecMode may lead the arguments. A pool opened by Open whose
// DSN names default_query_exec_mode keeps the mode it names.
func binaryMode(db *sql.DB) bool {
	_, ok := db.Driver().(*stdlib.Driver)
	return ok
}

// queryEach runs q, written with $n placeholders, scanning each result
// row into dest and then calling each. With pgx's driver the statement
// runs on the pgx connection itself (database/sql's Conn.Raw): through
// database/sql every column of every row became a driver value and was
// then converted into its destination, a quarter of a busy node's CPU on
// the Finish statement alone (22 columns a row, a row a fire).
func (s *Store) queryEach(ctx context.Context, q string, args, dest []any, each func() error) error {
	if !s.binary {
		rows, err := s.db.DB.QueryContext(ctx, q, args...) //nolint:rowserrcheck // scanEach returns rows.Err()
		if err != nil {
			return err
		}
		defer rows.Close()
		return scanEach(rows, dest, each)
	}
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("driver connection is %T, not pgx's", dc)
		}
		mode := s.execMode()
		err := queryPgx(ctx, c.Conn(), mode, q, args, dest, each)
		if mode == pgx.QueryExecModeCacheStatement && lostPrepared(err) {
			// A transaction pooler moved the session (nothing ran): prepare
			// no more.
			s.pooled.Store(true)
			err = queryPgx(ctx, c.Conn(), s.execMode(), q, args, dest, each)
		}
		return err
	})
}

// queryPgx runs q on c in mode, scanning each row into dest and calling
// each.
func queryPgx(ctx context.Context, c *pgx.Conn, mode pgx.QueryExecMode, q string, args, dest []any, each func() error) error {
	rows, err := c.Query(ctx, q, append([]any{mode}, args...)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return scanEach(rows, dest, each)
}

// rowScanner is what scanEach needs of *sql.Rows and pgx.Rows.
type rowScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanEach scans every row of rows into dest, calling each after each
// row. The caller closes rows.
func scanEach(rows rowScanner, dest []any, each func() error) error {
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if err := each(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// binaryArgs leads args with the exec mode that sends them in binary when
// binary (binaryMode) is set.
func binaryArgs(binary bool, args []any) []any {
	if !binary {
		return args
	}
	return append([]any{pgx.QueryExecModeCacheDescribe}, args...)
}

// dollarPlaceholders rewrites bun's ? placeholders as $1, $2, … in
// order, leaving quoted strings and identifiers alone.
func dollarPlaceholders(q string) string {
	var b strings.Builder
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		ch := q[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}
