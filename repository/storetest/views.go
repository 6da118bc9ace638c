package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The operator's views (ViewStore): counts, pages, chains, recent runs and
// failures, staleness judged from the live nodes' task sets.
var viewCases = []testCase{
	{"Stale", testViewStale},
	{"TaskCounts", testTaskCounts},
	{"TaskCountsOfSchedules", testTaskCountsOfSchedules},
	{"TaskPage", testTaskPage},
	{"TaskTree", testTaskTree},
	{"TaskRunsIsHistory", testTaskRuns},
	{"RecentExecutions", testRecentExecutions},
	{"CountFailures", testCountFailures},
}

// liveFor is the liveness window of the view cases: long enough that a
// node that heartbeated in the test is live.
const liveFor = time.Minute

// stale returns the names TaskPage marks stale, sorted.
func (e *env) stale() []string {
	e.t.Helper()
	p, err := e.s.TaskPage(e.ctx, e.g, repository.TaskQuery{LiveWithin: liveFor, Stale: true})
	if err != nil {
		e.t.Fatalf("TaskPage(stale): %v", err)
	}
	var out []string
	for _, r := range p.Rows {
		if !r.Stale {
			e.t.Errorf("TaskPage(Stale) returned %q with Stale false", r.Name)
		}
		out = append(out, r.Name)
	}
	return out
}

// beat heartbeats n with task set set (an id) and leaving.
func (e *env) beat(n repository.Node, set string, leaving bool) {
	e.t.Helper()
	n.TaskSet, n.Leaving = set, leaving
	if _, err := e.s.Heartbeat(e.ctx, n); err != nil {
		e.t.Fatalf("Heartbeat: %v", err)
	}
}

func (e *env) publish(names ...string) string {
	e.t.Helper()
	id, err := e.s.PublishTaskSet(e.ctx, names)
	if err != nil {
		e.t.Fatalf("PublishTaskSet: %v", err)
	}
	return id
}

func (e *env) wantNames(what string, got []string, want ...string) {
	e.t.Helper()
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		e.t.Errorf("%s: %q, want %q", what, got, want)
	}
}

func testViewStale(e *env) {
	now := e.now()
	e.upsert(def("a", now), def("b", now), repository.TaskDef{Name: "c", Parent: "a", NextStartTime: now})
	e.wantNames("no live node: all stale", e.stale(), "a", "b", "c")

	n1 := e.node("n1")
	e.beat(n1, e.publish("a", "c", "elsewhere"), false)
	e.wantNames("n1 registers a and c", e.stale(), "b")

	n2 := e.node("n2")
	e.beat(n2, "", false)
	e.wantNames("n2 published no set: it registers everything", e.stale())
	e.beat(n2, "", true)
	e.wantNames("n2 leaving: not live", e.stale(), "b")
	e.beat(n2, "0123456789abcdef0123456789abcdef", false)
	e.wantNames("n2's set is unknown: taken as everything", e.stale())
	e.beat(n2, e.publish("b"), false)
	e.wantNames("n1 and n2 cover every task", e.stale())

	other := e.nodeIn(e.other(), "n3")
	e.beat(other, "", false) // another group's node registers nothing here
	e.beat(n2, e.publish("x"), false)
	e.wantNames("a node of another group does not count", e.stale(), "b")
}

func testTaskCounts(e *env) {
	now := e.now()
	e.upsert(def("a", now), def("b", now), def("c", now), def("d", now))
	n := e.node("n")
	e.beat(n, e.publish("a", "b", "c"), false)
	a := e.claim(n.ID, e.task("a"))[0]
	e.runOnce(a, repository.ExecFailed) // a: doing (kept claim), failing
	if _, err := e.s.Pause(e.ctx, e.g, "b"); err != nil {
		e.t.Fatal(err)
	}
	counts, err := e.s.TaskCounts(e.ctx, e.g, liveFor)
	if err != nil {
		e.t.Fatalf("TaskCounts: %v", err)
	}
	got := map[repository.TaskCount]int{}
	total := 0
	for _, c := range counts {
		k := c
		k.Count = 0
		got[k] += c.Count
		total += c.Count
	}
	want := map[repository.TaskCount]int{
		{Status: repository.TaskDoing, NodeID: n.ID, Failing: true}: 1,
		{Status: repository.TaskPaused, Paused: true}:               1,
		{Status: repository.TaskPending}:                            1,
		{Status: repository.TaskPending, Stale: true}:               1,
	}
	if !reflect.DeepEqual(got, want) || total != 4 {
		e.t.Errorf("TaskCounts = %+v, want %+v", got, want)
	}
	e.remove("d", repository.Removal{})
	if c, err := e.s.TaskCounts(e.ctx, e.g, liveFor); err != nil || len(c) != 3 {
		e.t.Errorf("TaskCounts after removing d = %+v, %v; want 3 buckets", c, err)
	}
	if c, err := e.s.TaskCounts(e.ctx, e.other(), liveFor); err != nil || len(c) != 0 {
		e.t.Errorf("TaskCounts(other group) = %+v, %v; want none", c, err)
	}
}

// testTaskCountsOfSchedules follows the count of plain waiting runtime
// schedules, which a store may keep apart from the rows (the group's
// total less the notable tasks), through pause, failure, removal and
// revival.
func testTaskCountsOfSchedules(e *env) {
	now := e.now()
	e.create(sched("s0", "k", now), sched("s1", "k", now), sched("s2", "k", now), sched("s3", "k", now), sched("s4", "k", now))
	want := func(what string, want map[repository.TaskCount]int) {
		e.t.Helper()
		counts, err := e.s.TaskCounts(e.ctx, e.g, liveFor)
		if err != nil {
			e.t.Fatalf("TaskCounts: %v", err)
		}
		got := map[repository.TaskCount]int{}
		for _, c := range counts {
			if c.Count <= 0 {
				e.t.Errorf("%s: bucket %+v counts %d", what, c, c.Count)
			}
			k := c
			k.Count = 0
			got[k] += c.Count
		}
		if !reflect.DeepEqual(got, want) {
			e.t.Errorf("%s: TaskCounts = %v, want %v", what, got, want)
		}
	}
	plain := repository.TaskCount{Status: repository.TaskPending}
	want("created", map[repository.TaskCount]int{plain: 5})
	if _, err := e.s.Pause(e.ctx, e.g, "s1"); err != nil {
		e.t.Fatal(err)
	}
	paused := repository.TaskCount{Status: repository.TaskPaused, Paused: true}
	want("s1 paused", map[repository.TaskCount]int{plain: 4, paused: 1})
	e.remove("s2", repository.Removal{KeepHistory: true})
	want("s2 removed", map[repository.TaskCount]int{plain: 3, paused: 1})
	e.create(sched("s2", "k", now))
	want("s2 created again", map[repository.TaskCount]int{plain: 4, paused: 1})
	n := e.node("n")
	e.runOnce(e.claim(n.ID, e.task("s3"))[0], repository.ExecFailed)
	want("s3 ran and failed, claim kept", map[repository.TaskCount]int{
		plain: 3, paused: 1, {Status: repository.TaskDoing, NodeID: n.ID, Failing: true}: 1,
	})
	if c, err := e.s.TaskCounts(e.ctx, e.other(), liveFor); err != nil || len(c) != 0 {
		e.t.Errorf("TaskCounts(other group) = %+v, %v; want none", c, err)
	}
	p, err := e.s.TaskPage(e.ctx, e.g, repository.TaskQuery{LiveWithin: liveFor, Limit: 2})
	if err != nil || p.Total != 5 || p.TotalCapped || len(p.Rows) != 2 {
		e.t.Errorf("TaskPage(limit 2) = total %d capped %v, %d rows, %v; want 5, false, 2", p.Total, p.TotalCapped, len(p.Rows), err)
	}
}

func testTaskPage(e *env) {
	now := e.now()
	defs := []repository.TaskDef{def("Report-B", now), def("report-a", now), def("mail", now)}
	defs = append(defs, repository.TaskDef{Name: "zz-child", Parent: "mail", NextStartTime: now})
	e.upsert(defs...)
	page := func(q repository.TaskQuery) repository.TaskPage {
		e.t.Helper()
		q.LiveWithin = liveFor
		p, err := e.s.TaskPage(e.ctx, e.g, q)
		if err != nil {
			e.t.Fatalf("TaskPage(%+v): %v", q, err)
		}
		return p
	}
	names := func(p repository.TaskPage) []string {
		var out []string
		for _, r := range p.Rows {
			out = append(out, r.Name)
		}
		return out
	}
	all := page(repository.TaskQuery{})
	e.wantNames("all, by name (bytes)", names(all), "Report-B", "mail", "report-a", "zz-child")
	if all.Total != 4 || all.Rows[3].Parent != "mail" || all.Rows[0].Parent != "" {
		e.t.Errorf("all: total %d, parents %q %q; want 4, mail, none", all.Total, all.Rows[3].Parent, all.Rows[0].Parent)
	}
	if all.HasPrev || all.HasNext || all.TotalCapped {
		e.t.Errorf("one page of all: prev %v, next %v, capped %v; want none", all.HasPrev, all.HasNext, all.TotalCapped)
	}
	q := repository.TaskQuery{Limit: 2}
	p1 := page(q)
	e.wantNames("first 2-row page", names(p1), "Report-B", "mail")
	if p1.Total != 4 || p1.HasPrev || !p1.HasNext {
		e.t.Errorf("first page: total %d, prev %v, next %v; want 4, false, true", p1.Total, p1.HasPrev, p1.HasNext)
	}
	p2 := page(p1.Next(q))
	e.wantNames("second page, after mail", names(p2), "report-a", "zz-child")
	if p2.Total != 4 || !p2.HasPrev || p2.HasNext {
		e.t.Errorf("second page: total %d, prev %v, next %v; want 4, true, false", p2.Total, p2.HasPrev, p2.HasNext)
	}
	back := page(p2.Prev(q))
	e.wantNames("back from the second page", names(back), "Report-B", "mail")
	if back.HasPrev || !back.HasNext {
		e.t.Errorf("back: prev %v, next %v; want false, true", back.HasPrev, back.HasNext)
	}
	mid := page(repository.TaskQuery{Limit: 2, Before: "zz-child"})
	e.wantNames("the 2 before zz-child", names(mid), "mail", "report-a")
	if !mid.HasPrev || !mid.HasNext {
		e.t.Errorf("middle page: prev %v, next %v; want both", mid.HasPrev, mid.HasNext)
	}
	e.wantNames("after a name that is no task", names(page(repository.TaskQuery{After: "n"})), "report-a", "zz-child")
	if p := page(repository.TaskQuery{After: "zz-child", Limit: 2}); len(p.Rows) != 0 || p.Total != 4 || !p.HasPrev || p.HasNext {
		e.t.Errorf("past the end: %d rows, total %d, prev %v, next %v; want 0, 4, true, false", len(p.Rows), p.Total, p.HasPrev, p.HasNext)
	}
	s := page(repository.TaskQuery{Search: "REPORT"})
	e.wantNames("search ignores case", names(s), "Report-B", "report-a")
	if s.Total != 2 {
		e.t.Errorf("search total %d, want 2", s.Total)
	}

	n := e.node("n")
	e.beat(n, e.publish("mail", "zz-child", "report-a"), false)
	held := e.claim(n.ID, e.task("report-a"))[0]
	e.runOnce(held, repository.ExecTimedOut)
	if _, err := e.s.Pause(e.ctx, e.g, "mail"); err != nil {
		e.t.Fatal(err)
	}
	e.wantNames("doing", names(page(repository.TaskQuery{Status: repository.TaskDoing})), "report-a")
	e.wantNames("paused", names(page(repository.TaskQuery{Paused: true})), "mail")
	e.wantNames("failing", names(page(repository.TaskQuery{Failing: true})), "report-a")
	e.wantNames("stale", names(page(repository.TaskQuery{Stale: true})), "Report-B")
	e.wantNames("filters combine", names(page(repository.TaskQuery{Search: "report", Stale: true, Status: repository.TaskDoing})))
	if p := page(repository.TaskQuery{Search: "%"}); p.Total != 0 {
		e.t.Errorf("search %%: total %d, want 0 (no pattern syntax)", p.Total)
	}
	if p, err := e.s.TaskPage(e.ctx, e.other(), repository.TaskQuery{}); err != nil || p.Total != 0 {
		e.t.Errorf("other group: %+v, %v; want empty", p, err)
	}
}

func testTaskTree(e *env) {
	now := e.now()
	e.upsert(def("root", now), def("lone", now),
		repository.TaskDef{Name: "kid", Parent: "root", NextStartTime: now},
		repository.TaskDef{Name: "grandkid", Parent: "kid", NextStartTime: now},
		repository.TaskDef{Name: "kid2", Parent: "root", NextStartTime: now})
	for _, name := range []string{"root", "kid", "grandkid", "kid2"} {
		rows, err := e.s.TaskTree(e.ctx, e.g, name, liveFor)
		if err != nil {
			e.t.Fatalf("TaskTree(%q): %v", name, err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.Name+"<"+r.Parent)
			if !r.Stale {
				e.t.Errorf("TaskTree(%q): %q not stale with no node", name, r.Name)
			}
		}
		e.wantNames("chain of "+name, got, "root<", "kid<root", "grandkid<kid", "kid2<root")
	}
	if rows, err := e.s.TaskTree(e.ctx, e.g, "lone", liveFor); err != nil || len(rows) != 1 {
		e.t.Errorf("TaskTree(lone) = %+v, %v; want the task alone", rows, err)
	}
	_, err := e.s.TaskTree(e.ctx, e.other(), "root", liveFor)
	if !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Errorf("TaskTree in another group: %v, want ErrTaskNotFound", err)
	}
	n := e.node("n")
	held := e.claim(n.ID, e.task("lone"))[0]
	e.runOnce(held, repository.ExecSucceeded)
	e.remove("lone", repository.Removal{KeepHistory: true}) // a tombstone with history
	if _, err := e.s.TaskTree(e.ctx, e.g, "lone", liveFor); !errors.Is(err, repository.ErrTaskNotFound) {
		e.t.Errorf("TaskTree(removed) = %v, want ErrTaskNotFound", err)
	}
	p, err := e.s.TaskPage(e.ctx, e.g, repository.TaskQuery{LiveWithin: liveFor, Search: "lone"})
	if err != nil || p.Total != 0 {
		e.t.Errorf("TaskPage lists a removed task: %+v, %v", p, err)
	}
}

func testRecentExecutions(e *env) {
	n := e.node("n")
	a := e.claimed("a", n.ID)
	b := e.claimed("b", n.ID)
	a, x1 := e.runOnce(a, repository.ExecSucceeded)
	_, x2 := e.runOnce(b, repository.ExecFailed)
	_, x3 := e.runOnce(a, repository.ExecSucceeded)
	o := e.nodeIn(e.other(), "n")
	ot := e.claim(o.ID, e.upsertIn(e.other(), def("a", e.now().Add(-time.Second)))[0])[0]
	if _, err := e.s.StartExecution(e.ctx, ot.Claim(), repository.Execution{ScheduledAt: ot.NextStartTime, Attempt: 1}); err != nil {
		e.t.Fatal(err)
	}
	recent := func(since time.Time, limit int) []repository.Execution {
		e.t.Helper()
		xs, err := e.s.RecentExecutions(e.ctx, e.g, since, limit)
		if err != nil {
			e.t.Fatalf("RecentExecutions: %v", err)
		}
		return xs
	}
	all := recent(time.Time{}, 0)
	e.wantExecs("all, newest first, this group only", all, x3, x2, x1)
	if len(all) == 3 && (all[0].TaskName != "a" || all[1].TaskName != "b" || all[1].Status != repository.ExecFailed) {
		e.t.Errorf("rows %+v: want task names and statuses", all)
	}
	e.wantExecs("limit", recent(time.Time{}, 2), x3, x2)
	if len(all) == 3 {
		e.wantExecs("since the second's start", recent(all[1].StartedAt, 0), x3, x2)
	}
	e.wantExecs("since later", recent(e.now().Add(time.Minute), 0))
}

func testCountFailures(e *env) {
	n := e.node("n")
	a := e.claimed("a", n.ID)
	start := e.now()
	for _, st := range []repository.ExecStatus{repository.ExecFailed, repository.ExecSucceeded, repository.ExecFailed,
		repository.ExecTimedOut, repository.ExecFenced, repository.ExecSkipped} {
		a, _ = e.runOnce(a, st)
	}
	o := e.nodeIn(e.other(), "n")
	ot := e.claim(o.ID, e.upsertIn(e.other(), def("a", e.now().Add(-time.Second)))[0])[0]
	x, err := e.s.StartExecution(e.ctx, ot.Claim(), repository.Execution{ScheduledAt: ot.NextStartTime, Attempt: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	e.finish(repository.Finish{Claim: ot.Claim(), Revision: ot.Revision, ExecutionID: x.ID, Status: repository.ExecFailed,
		Next: ot.NextStartTime.Add(time.Minute), NextAttempt: 1, Cron: ot.Cron})
	got, err := e.s.CountFailures(e.ctx, e.g, start)
	if err != nil {
		e.t.Fatalf("CountFailures: %v", err)
	}
	want := map[repository.ExecStatus]int{repository.ExecFailed: 2, repository.ExecTimedOut: 1, repository.ExecFenced: 1}
	if !reflect.DeepEqual(got, want) {
		e.t.Errorf("CountFailures = %v, want %v", got, want)
	}
	if got, err := e.s.CountFailures(e.ctx, e.g, e.now().Add(time.Minute)); err != nil || len(got) != 0 {
		e.t.Errorf("CountFailures(later) = %v, %v; want none", got, err)
	}
}

func testTaskRuns(e *env) {
	n := e.node("n")
	a := e.claimed("a", n.ID)
	noise := e.claimed("noise", n.ID)
	e.runOnce(noise, repository.ExecFailed)
	var mid time.Time
	for i, st := range []repository.ExecStatus{repository.ExecSucceeded, repository.ExecFailed, repository.ExecSucceeded,
		repository.ExecTimedOut, repository.ExecFailed, repository.ExecSucceeded} {
		if i == 3 {
			mid = e.waitPast(e.now())
		}
		a, _ = e.runOnce(a, st)
	}
	all := e.history("a", repository.HistoryFilter{})
	for _, f := range []repository.HistoryFilter{
		{}, {Limit: 2}, {Status: repository.ExecFailed}, {Since: mid}, {BeforeID: all[1].ID, Limit: 2},
		{Status: repository.ExecSucceeded, Since: mid}, {Status: repository.ExecAbandoned},
	} {
		got, err := e.s.TaskRuns(e.ctx, e.g, a.ID, f)
		if err != nil {
			e.t.Fatalf("TaskRuns(%+v): %v", f, err)
		}
		want := e.history("a", f)
		e.wantExecs(fmt.Sprintf("TaskRuns(%+v) against History", f), got, execIDs(want)...)
		for _, x := range got {
			if x.TaskName != "a" {
				e.t.Errorf("TaskRuns: TaskName %q, want a", x.TaskName)
			}
		}
	}
	if got, err := e.s.TaskRuns(e.ctx, e.other(), a.ID, repository.HistoryFilter{}); err != nil || len(got) != 0 {
		e.t.Errorf("TaskRuns in another group = %v, %v; want none", got, err)
	}
}
