package storetest

import (
	"slices"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The groups side by side (GroupReader).
var groupCases = []testCase{
	{"Summaries", testGroupSummaries},
	{"Discovery", testGroupDiscovery},
}

// summaries reads the summaries of the named groups over an hour.
func (e *env) summaries(names ...string) map[string]repository.GroupSummary {
	e.t.Helper()
	gs, err := e.s.GroupSummaries(e.ctx, repository.GroupQuery{
		Names: names, LiveWithin: liveFor, FiresWithin: time.Hour, FailuresWithin: time.Hour,
	})
	if err != nil {
		e.t.Fatalf("GroupSummaries(%q): %v", names, err)
	}
	out := map[string]repository.GroupSummary{}
	for _, g := range gs {
		out[g.Group] = g
	}
	if len(out) != len(gs) || !slices.IsSortedFunc(gs, func(a, b repository.GroupSummary) int {
		return strings.Compare(a.Group, b.Group)
	}) {
		e.t.Errorf("GroupSummaries(%q): %+v, want each group once, sorted", names, gs)
	}
	return out
}

func testGroupSummaries(e *env) {
	now := e.now()
	e.upsert(def("a", now), def("b", now), def("c", now), def("d", now))
	n := e.node("n")
	e.beat(n, "", false)
	leaving := e.node("leaving")
	e.beat(leaving, "", true)
	a := e.claim(n.ID, e.task("a"))[0]
	a, _ = e.runOnce(a, repository.ExecFailed) // a: doing (kept claim), failing
	e.runOnce(a, repository.ExecSucceeded)     // two fires; a no longer failing
	c := e.claim(n.ID, e.task("c"))[0]
	e.runOnce(c, repository.ExecTimedOut) // c: doing, failing
	if _, err := e.s.Pause(e.ctx, e.g, "b"); err != nil {
		e.t.Fatal(err)
	}
	e.remove("d", repository.Removal{})
	empty := e.g + "-empty"

	got := e.summaries(e.g, empty, e.g) // a name given twice is listed once
	g := got[e.g]
	want := repository.GroupSummary{Group: e.g, Tasks: 3, Running: 2, Paused: 1, Failing: 1, Nodes: 2, LiveNodes: 1,
		Fires: 3, Failures: 2, LastFailure: g.LastFailure}
	if g != want {
		e.t.Errorf("summary of the group = %+v, want %+v", g, want)
	}
	if g.LastFailure.IsZero() || g.LastFailure.Before(now) {
		e.t.Errorf("LastFailure = %v, want a time after %v", g.LastFailure, now)
	}
	if z, ok := got[empty]; !ok || z != (repository.GroupSummary{Group: empty}) {
		e.t.Errorf("summary of a group with nothing = %+v (listed %v), want zero counts", z, ok)
	}
	// Spans of zero count nothing.
	gs, err := e.s.GroupSummaries(e.ctx, repository.GroupQuery{Names: []string{e.g}, LiveWithin: liveFor})
	if err != nil || len(gs) != 1 || gs[0].Fires != 0 || gs[0].Failures != 0 || !gs[0].LastFailure.IsZero() {
		e.t.Errorf("GroupSummaries without spans = %+v, %v; want no fires, no failures", gs, err)
	}
	// A later span holds no run; another group's runs are not counted.
	o := e.nodeIn(e.other(), "n")
	ot := e.claim(o.ID, e.upsertIn(e.other(), def("a", now))[0])[0]
	e.runOnce(ot, repository.ExecFailed)
	if g2 := e.summaries(e.g)[e.g]; g2.Fires != 3 || g2.Failures != 2 {
		e.t.Errorf("after another group's run: %+v, want 3 fires and 2 failures", g2)
	}
}

func testGroupDiscovery(e *env) {
	gone := e.threeGroups()
	// Every group, a page of 2 at a time (the database is shared).
	var seen []string
	q := repository.GroupQuery{Limit: 2, LiveWithin: liveFor}
	for range 100000 {
		gs, err := e.s.GroupSummaries(e.ctx, q)
		if err != nil {
			e.t.Fatalf("GroupSummaries(%+v): %v", q, err)
		}
		if len(gs) > 2 {
			e.t.Fatalf("GroupSummaries(limit 2) = %d groups", len(gs))
		}
		if len(gs) == 0 {
			break
		}
		for _, g := range gs {
			seen = append(seen, g.Group)
			if g.Group == e.g && g.Tasks != 1 {
				e.t.Errorf("discovered %+v: want 1 task", g)
			}
			if g.Group == e.other() && (g.Nodes != 1 || g.Tasks != 0) {
				e.t.Errorf("discovered %+v: want 1 node, no task", g)
			}
		}
		q.After = gs[len(gs)-1].Group
	}
	if !slices.Contains(seen, e.g) || !slices.Contains(seen, e.other()) || slices.Contains(seen, gone) {
		e.t.Errorf("discovered %d groups: want %q and %q, not %q", len(seen), e.g, e.other(), gone)
	}
	if len(slices.Compact(slices.Clone(seen))) != len(seen) {
		e.t.Errorf("a group was listed twice over the pages: %q", seen)
	}
}
