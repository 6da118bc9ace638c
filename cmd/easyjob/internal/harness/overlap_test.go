package harness

import (
	"testing"
	"time"
)

// TestAnalyzeOverlaps: each policy's rule catches the run that breaks it,
// and a pair near a fault is not judged.
func TestAnalyzeOverlaps(t *testing.T) {
	s := func(sec float64) int64 {
		return time.Unix(1000, 0).Add(time.Duration(sec * float64(time.Second))).UnixNano()
	}
	run := func(task string, sched, start, end float64) fire {
		return fire{Task: task, Sched: s(sched), Start: s(start), End: s(end)}
	}
	onNode := func(f fire, node int64) fire {
		f.Node = node
		return f
	}
	byTask := map[string][]fire{
		// skip: the second run is of a fire due during the first.
		"o00-skip": {run("o00-skip", 0, 0, 1.4), run("o00-skip", 1, 1.45, 2.85)},
		// buffer_one: fine (the first fire due during the run).
		"o01-buffer_one": {run("o01-buffer_one", 0, 0, 1.4), run("o01-buffer_one", 1, 1.41, 2.81)},
		// buffer_all: a fire left out.
		"o02-buffer_all": {run("o02-buffer_all", 0, 0, 1.4), run("o02-buffer_all", 2, 1.41, 2.81)},
		// cancel: the first run was not cancelled, and the second overlaps it.
		"o03-cancel": {run("o03-cancel", 0, 0, 1.4), run("o03-cancel", 1, 1.2, 2.2)},
		// terminate: near a fault.
		"o04-terminate": {run("o04-terminate", 100, 100, 101.4), run("o04-terminate", 101, 100.5, 102)},
		// allow_all: two at once are fine; a third at once is over the
		// limit (concurrent); a fire left out below the limit breaks the
		// policy, one left out at the limit (7: 5 and 6 still ran) does
		// not, nor does a run beside another node's.
		"o05-allow_all": {run("o05-allow_all", 0, 0, 1.4), run("o05-allow_all", 1, 1, 3.5), run("o05-allow_all", 2, 2, 3.4),
			run("o05-allow_all", 3, 3, 4.4), run("o05-allow_all", 5, 5, 7.5), run("o05-allow_all", 6, 6, 7.4),
			run("o05-allow_all", 8, 8, 9.4), onNode(run("o05-allow_all", 9, 8.1, 12), 2), run("o05-allow_all", 10, 10, 11.4)},
	}
	r := analyzeOverlaps(byTask, func(prev, _ fire) bool { return prev.Start >= s(99) })
	if r.Tasks != 6 || r.Runs != 19 || r.Concurrent != 2 || r.PolicyBroken != 3 || r.NearFault != 1 {
		t.Fatalf("report %+v; want 2 concurrent (cancel, allow_all's third), 3 broken (skip, buffer_all, allow_all's gap), 1 near a fault", r)
	}
	if _, ok := overlapPolicyOf("t00001"); ok {
		t.Error("a plain task taken for an overlap task")
	}
	if got := overlapTaskName(8); got != "o08-buffer_all" {
		t.Errorf("overlapTaskName(8) = %q", got)
	}
	f := fire{Task: "o00-skip", Sched: 1, Node: 2, Start: 3, Attempt: 1, Exec: 4, Version: 5, End: 6}
	back, err := parseLine(appendLine(nil, f)[:len(appendLine(nil, f))-1])
	if err != nil || back != f {
		t.Errorf("ledger line round trip: %+v, %v; want %+v", back, err, f)
	}
}
