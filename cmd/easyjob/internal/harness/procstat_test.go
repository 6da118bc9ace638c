package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// statLine is a /proc/PID/stat line with the fields the harness reads.
func statLine(comm string, ppid int, ut, st, cut, cst int64) string {
	return fmt.Sprintf("42 (%s) S %d 42 42 0 -1 4194304 1 2 3 4 %d %d %d %d 20 0 1 0 4749 222543872 7613\n", comm, ppid, ut, st, cut, cst)
}

func TestParseProcStat(t *testing.T) {
	// A real line of a postmaster (PostgreSQL 15, Debian).
	line := "2217 (postgres) S 1 2217 2217 0 -1 4194304 4814 109846 0 17 5 19 2338 259 20 0 1 0 4749 222543872 7613 " +
		"18446744073709551615 94609345806336 94609351262681 140721812945408 0 0 0 0 24129536 84487 1 0 0 17 0 0 0 0 0 0\n"
	got, err := parseProcStat(line)
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{Comm: "postgres", PPid: 1, UTime: 5, STime: 19, CUTime: 2338, CSTime: 259}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	got, err = parseProcStat(statLine("a b) (c", 7, 1, 2, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	if want := (procStat{Comm: "a b) (c", PPid: 7, UTime: 1, STime: 2, CUTime: 3, CSTime: 4}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "12 postgres S 1", "12 (postgres) S 1 2 3", "12 (p) S x 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"} {
		if _, err := parseProcStat(bad); err == nil {
			t.Errorf("parseProcStat(%q): no error", bad)
		}
	}
}

func TestTreeCPUTicks(t *testing.T) {
	root := t.TempDir()
	write := func(pid, line string) {
		if err := os.MkdirAll(filepath.Join(root, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("100", statLine("postgres", 1, 10, 20, 300, 400)) // postmaster: 730
	write("101", statLine("postgres", 100, 1, 2, 50, 50))   // child: 3 (its cutime not counted)
	write("102", statLine("postgres", 100, 4, 5, 0, 0))     // child: 9
	write("200", statLine("other", 1, 1000, 1000, 0, 0))    // not a child
	write("300", statLine("postgres", 101, 70, 70, 0, 0))   // grandchild: not counted
	write("self", "not a pid")
	if err := os.MkdirAll(filepath.Join(root, "400"), 0o755); err != nil { // exited: no stat
		t.Fatal(err)
	}
	got, err := treeCPUTicks(root, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got != 742 {
		t.Fatalf("ticks = %d, want 742", got)
	}
	if _, err := treeCPUTicks(root, 999); err == nil {
		t.Fatal("missing postmaster: no error")
	}
}
