// Package dsn says which PostgreSQL server the easyjob command talks to
// when no --dsn is given: $EASYJOB_DSN, else a local server.
package dsn

import "os"

// Default is the server used when neither --dsn nor EASYJOB_DSN is set.
const Default = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// FromEnv returns $EASYJOB_DSN, else Default.
func FromEnv() string {
	if d := os.Getenv("EASYJOB_DSN"); d != "" {
		return d
	}
	return Default
}
