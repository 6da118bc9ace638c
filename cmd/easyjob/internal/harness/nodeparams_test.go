package harness

import (
	"slices"
	"testing"
)

// TestGOMAXPROCSReachesTheNodeProcess checks that --gomaxprocs is handed
// to node processes and refused where it could not apply.
func TestGOMAXPROCSReachesTheNodeProcess(t *testing.T) {
	p := nodeParams{DSN: "postgres://x", Group: "g", Tasks: 1, Cron: "* * * * * *", GOMAXPROCS: 1}
	if a := p.args(); !slices.Contains(a, "--gomaxprocs") || a[slices.Index(a, "--gomaxprocs")+1] != "1" {
		t.Fatalf("node args %q: want --gomaxprocs 1", a)
	}
	p.GOMAXPROCS = 0
	if a := p.args(); slices.Contains(a, "--gomaxprocs") {
		t.Fatalf("node args %q: no --gomaxprocs when unset", a)
	}
	for _, args := range [][]string{
		{"--nodes", "2", "--gomaxprocs", "1"},  // in-process nodes share the harness's runtime
		{"--procs", "2", "--gomaxprocs", "-1"}, // not a CPU count
	} {
		b := &benchCmd{}
		fs := b.flagSet()
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := b.check(fs); err == nil {
			t.Errorf("bench %q: accepted", args)
		}
	}
}
