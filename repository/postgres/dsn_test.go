package postgres

import "testing"

func TestWithDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u@h:5432/postgres?sslmode=disable": "postgres://u@h:5432/x?sslmode=disable",
		"host=h dbname=postgres user=u":                "host=h dbname=x user=u",
		"host=h user=u":                                "host=h user=u dbname=x",
	} {
		if got, err := WithDatabase(in, "x"); err != nil || got != want {
			t.Errorf("%q: got %q %v", in, got, err)
		}
	}
}
