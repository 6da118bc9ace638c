package harness

import (
	"strings"
	"testing"
	"time"
)

// A capacity trial holds only when its steady window owed fires and got
// each of them once, in time. A trial too short for its K (the first fire
// after the window) owed none: it must not count as held, or the search
// reports a capacity it never measured.
func TestJudgeTrial(t *testing.T) {
	bound := 100 * time.Millisecond
	ok := func() *trialResult {
		return &trialResult{Steady: steadyReport{Expected: 1000, Lag: latency{P99: 4}}}
	}
	cases := []struct {
		name string
		edit func(*trialResult)
		held bool
		why  string
	}{
		{"every fire on time", func(*trialResult) {}, true, ""},
		{"empty window", func(r *trialResult) { r.Steady = steadyReport{} }, false, "no fire owed"},
		{"a miss", func(r *trialResult) { r.Steady.Missed = 1 }, false, "1 missed"},
		{"late", func(r *trialResult) { r.Steady.Lag.P99 = 101 }, false, "p99 lag"},
		{"a duplicate", func(r *trialResult) { r.Duplicates = 2 }, false, "2 duplicates"},
	}
	for _, c := range cases {
		r := ok()
		c.edit(r)
		held, why := judgeTrial(r, bound)
		if held != c.held || !strings.Contains(why, c.why) {
			t.Errorf("%s: held %v (%q), want %v (%q)", c.name, held, why, c.held, c.why)
		}
	}
}
