package postgres

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The hot statement (Finish, once per fire) bypasses bun's formatting:
// bun writes every argument into the statement's text, so a batch of
// arrays became a long literal that the client formatted and the server
// parsed and planned afresh, and the returned timestamps came back as
// text. queryBinary sends the arrays as parameters in PostgreSQL's binary
// format with pgx's describe cache (unnamed statements: no server-side
// prepared statement, so it works through transaction-pooling proxies),
// and reads results in binary.

// binaryMode reports whether db is pgx's database/sql driver, so that a
// pgx.QueryExecMode may lead the arguments. A pool opened by Open whose
// DSN names default_query_exec_mode keeps the mode it names.
func binaryMode(db *sql.DB) bool {
	_, ok := db.Driver().(*stdlib.Driver)
	return ok
}

// queryBinary runs q, written with $n placeholders, with args as
// parameters (Go slices for arrays).
func (s *Store) queryBinary(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.db.DB.QueryContext(ctx, q, binaryArgs(s.binary, args)...)
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
