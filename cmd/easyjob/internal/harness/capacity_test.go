package harness

import (
	"errors"
	"math"
	"slices"
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

// The search raises K until a trial fails, with no ceiling of its own but
// the safety cap, then bisects between the largest K held and the
// smallest failed; a cap the user set ends it like a failure would not.
func TestCapacitySearch(t *testing.T) {
	cases := []struct {
		name                  string
		start, userMax, steps int
		holds                 int // the made-up machine holds every K up to this
		tried                 []int
		best, failed          int
		capped                string
	}{
		{"past the old 16000 ceiling", 250, 0, 3, 20000,
			[]int{250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 24000, 20000, 22000}, 20000, 22000, ""},
		{"user cap held", 250, 3000, 3, 1 << 30, []int{250, 500, 1000, 2000, 3000}, 3000, 0, "capacity-max"},
		{"user cap failed: bisect below it", 250, 3000, 3, 2500,
			[]int{250, 500, 1000, 2000, 3000, 2500, 2750, 2625}, 2500, 2625, ""},
		{"safety cap", 250, 0, 3, 1 << 30,
			[]int{250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000}, safetyMaxTasks, 0, "safety"},
		{"user cap above the safety cap", 200000, 300000, 3, 1 << 30, []int{200000, 300000}, 300000, 0, "capacity-max"},
		{"first K fails", 250, 0, 3, 100, []int{250}, 0, 250, ""},
		{"gap narrowed to 5 %", 1000, 0, 10, 1000, []int{1000, 2000, 1500, 1250, 1125, 1062, 1031}, 1000, 1031, ""},
		{"no bisection", 1000, 0, 0, 1500, []int{1000, 2000}, 1000, 2000, ""},
		{"start above the cap", 5000, 3000, 3, 1 << 30, []int{3000}, 3000, 0, "capacity-max"},
	}
	for _, c := range cases {
		s := newCapacitySearch(c.start, c.userMax, c.steps)
		var tried []int
		for {
			k, ok := s.next()
			if !ok {
				break
			}
			if len(tried) > 100 {
				t.Fatalf("%s: does not end: %v", c.name, tried[:20])
			}
			tried = append(tried, k)
			s.record(k, k <= c.holds)
		}
		if !slices.Equal(tried, c.tried) || s.best() != c.best || s.failed() != c.failed || s.capped() != c.capped {
			t.Errorf("%s: tried %v best %d failed %d capped %q, want %v %d %d %q",
				c.name, tried, s.best(), s.failed(), s.capped(), c.tried, c.best, c.failed, c.capped)
		}
	}
}

// The report names a search ceiling only when the user's --capacity-max
// was reached, and gives the capacity as a share of the pgbench limit.
func TestCapacityReport(t *testing.T) {
	base := func() *capacityResult {
		return &capacityResult{Nodes: 3, Cron: "* * * * * *", RatePerTask: 1, BestTasks: 16000, BestFiresPerSc: 16000,
			Trials: []capacityTrial{{Tasks: 16000, Held: true}, {Tasks: 32000, Why: "p99 lag 2s > 100ms"}}}
	}
	cases := []struct {
		name     string
		edit     func(*capacityResult)
		want     []string
		dontWant []string
	}{
		{"bracketed", func(c *capacityResult) { c.FailedTasks = 32000 }, []string{"(K = 32000 failed)"}, []string{"ceiling", "safety cap"}},
		{"user cap", func(c *capacityResult) { c.Ceiling = true }, []string{"search ceiling you set"}, nil},
		{"safety cap", func(c *capacityResult) { c.SafetyCap = safetyMaxTasks }, []string{"safety cap of 256000"}, []string{"ceiling"}},
		{"share", func(c *capacityResult) {
			c.addWriteLimit(&writeLimit{FiresPerSec: 136000, Pgbench: "pgbench (PostgreSQL) 15", Clients: 4, RowsPerStatement: 500}, nil)
		}, []string{"16000 fires/s = 11.8 % of the pgbench write-pattern limit 136000 fires/s measured now", "4 clients × 500"}, nil},
		{"pgbench missing", func(c *capacityResult) { c.addWriteLimit(nil, errors.New("pgbench not found")) },
			[]string{"pgbench write-pattern limit: skipped: pgbench not found"}, nil},
	}
	for _, c := range cases {
		r := base()
		c.edit(r)
		var b strings.Builder
		r.print(&b)
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, b.String())
			}
		}
		for _, w := range c.dontWant {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s: %q in\n%s", c.name, w, b.String())
			}
		}
	}
	r := base()
	r.addWriteLimit(&writeLimit{FiresPerSec: 64000}, nil)
	if math.Abs(r.CapacityShare-0.25) > 1e-9 {
		t.Errorf("share %v, want 0.25", r.CapacityShare)
	}
}
