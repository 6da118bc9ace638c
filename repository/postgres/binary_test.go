package postgres

import "testing"

func TestDollarPlaceholders(t *testing.T) {
	got := dollarPlaceholders(`SELECT ?::int[], 'what?', "odd?col", ? FROM t WHERE x = ?`)
	want := `SELECT $1::int[], 'what?', "odd?col", $2 FROM t WHERE x = $3`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
