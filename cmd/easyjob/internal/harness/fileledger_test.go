package harness

import (
	"testing"
)

func TestLedgerLineRoundTrip(t *testing.T) {
	f := fire{Task: "t00001", Sched: 1_700_000_000_000_000_000, Node: 3, Start: 1_700_000_000_004_000_000, Attempt: 1, Exec: 42, Version: 7}
	line := appendLine(nil, f)
	g, err := parseLine(line[:len(line)-1])
	if err != nil || g != f {
		t.Fatalf("%v %+v", err, g)
	}
}
