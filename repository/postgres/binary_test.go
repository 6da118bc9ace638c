package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

func TestDollarPlaceholders(t *testing.T) {
	got := dollarPlaceholders(`SELECT ?::int[], 'what?', "odd?col", ? FROM t WHERE x = ?`)
	want := `SELECT $1::int[], 'what?', "odd?col", $2 FROM t WHERE x = $3`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// A pool opened through pgx's database/sql driver (as Open and New's
// callers do) gets the binary hot path; a silent fallback to text would
// only show as CPU.
func TestBinaryModeForPgxPools(t *testing.T) {
	cfg, err := pgx.ParseConfig("postgres://nobody@127.0.0.1:1/none") // never dialled
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	if !binaryMode(db) {
		t.Fatal("pgx stdlib pool: binaryMode = false, want true")
	}
	if s := New(db); !s.binary {
		t.Fatal("New over a pgx pool: binary hot path off")
	}
}
