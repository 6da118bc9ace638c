// Package dsn says which PostgreSQL server the easyjob command talks to.
// Operator commands need --dsn or $EASYJOB_DSN (Env); the measurement
// harness, which works in scratch databases it creates, falls back to a
// local server (FromEnv).
package dsn

import "os"

// Default is the server the harness uses when neither --dsn nor
// EASYJOB_DSN is set.
const Default = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Env returns $EASYJOB_DSN ("" when unset).
func Env() string { return os.Getenv("EASYJOB_DSN") }

// FromEnv returns $EASYJOB_DSN, else Default.
func FromEnv() string {
	if d := Env(); d != "" {
		return d
	}
	return Default
}
