package harness

import (
	"testing"
	"time"
)

// TestFindUnrecorded: a run without its row in the history is counted,
// unless its process was killed as it ran; the row is matched by task,
// fire (to the microsecond) and node.
func TestFindUnrecorded(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	res := &chaosResult{
		procNames: []string{"p0.0", "p1.0"},
		Faults:    []*fault{{Kind: "kill", Proc: "p1.0", At: t0.Add(1500 * time.Millisecond)}},
	}
	fires := []fire{
		{Task: "a", Sched: at(0) + 999, Node: 1, Start: at(time.Millisecond), Proc: 0},          // recorded (ns below a microsecond)
		{Task: "b", Sched: at(0), Node: 1, Start: at(time.Millisecond), Proc: 0},                // no row: unrecorded
		{Task: "c", Sched: at(time.Second), Node: 2, Start: at(time.Second), Proc: 1},           // no row, killed 0.5 s later
		{Task: "d", Sched: at(-5 * time.Second), Node: 2, Start: at(-5 * time.Second), Proc: 1}, // no row, long before the kill
	}
	rows := map[runKey]bool{{task: "a", sched: t0.UnixMicro(), node: 1}: true}
	res.findUnrecorded(fires, rows)
	if res.Unrecorded != 2 || res.UnrecordedKilled != 1 || len(res.UnrecordedDetails) != 2 {
		t.Fatalf("unrecorded %d, killed %d, details %v; want 2 (b, d), 1 (c)", res.Unrecorded, res.UnrecordedKilled, res.UnrecordedDetails)
	}
}
