package dashboard

import (
	"html"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// TestSearchShownOnce: the task list shows its search term once, escaped,
// as the search box's value, whatever else the page draws (filter chips,
// pager, actions, the count), with or without a filter; an action from
// the list returns to it with the term, taken from the list's address.
func TestSearchShownOnce(t *testing.T) {
	f := newFixture(t, Options{})
	tok := f.token()
	for _, term := range []string{"zq9", `"><img src=x onerror=alert(1)>zq9`, "zq9 & <b>"} {
		for _, show := range []string{"", "&show=stale", "&show=running", "&filter=paused"} {
			path := "/tasks?q=" + url.QueryEscape(term) + show
			code, body := f.get(path)
			if code != http.StatusOK {
				t.Fatalf("GET %s: %d", path, code)
			}
			esc := html.EscapeString(term)
			if n := strings.Count(body, "zq9"); n != 1 || !strings.Contains(body, `name="q" value="`+esc+`"`) {
				t.Errorf("GET %s: the term %d times, want once, as the input's value %q:\n%s", path, n, esc, body)
			}
			if strings.Contains(term, "<") && strings.Contains(body, term) {
				t.Errorf("GET %s: the term unescaped", path)
			}
		}
	}
	// The form's chip: a filter, the term kept by the form itself.
	if _, body := f.get("/tasks?q=orph&filter=stale"); !strings.Contains(body, `data-task="orphan"`) || !strings.Contains(body, `<button name="filter" value="stale" class="on">`) {
		t.Errorf("the stale chip with a search: no orphan, or not on")
	}
	// The way back after an action on the list.
	list := f.srv.URL + "/ops/tasks?q=orph&show=stale"
	code, _ := f.post(url.Values{"op": {"pause"}, "name": {"orphan"}, "csrf": {tok}, "back": {"?show=stale"}}, "Referer", list)
	if code != http.StatusSeeOther {
		t.Fatalf("pause from the list: %d", code)
	}
	req := newRequest(t, http.MethodPost, "/action", "")
	req.Header.Set("Referer", list)
	req.Host = strings.TrimPrefix(f.srv.URL, "http://")
	req.PostForm = url.Values{"back": {"?show=stale"}}
	if got, want := backTo(req, "pause", "orphan"), "/tasks?q=orph&show=stale&done=pause&task=orphan"; got != want {
		t.Errorf("back to %q, want %q", got, want)
	}
	req.Header.Set("Referer", "http://elsewhere.example/tasks?q=evil")
	if got, want := backTo(req, "pause", "orphan"), "/tasks?show=stale&done=pause&task=orphan"; got != want {
		t.Errorf("back from another site to %q, want %q", got, want)
	}
}

// TestRunningNotDoing: a task whose fire is claimed (the store's status
// doing) is shown as running, on every page and filter; the old filter
// link ?show=doing still lists it.
func TestRunningNotDoing(t *testing.T) {
	f := newFixture(t, Options{})
	if st := f.task("report").Status; st != "doing" {
		t.Fatalf("report is %s, want doing (claimed)", st)
	}
	for _, path := range []string{"/", "/tasks", "/tasks?show=running", "/tasks?show=doing", "/task?name=report", "/task?name=mail", "/nodes"} {
		code, body := f.get(path)
		if code != http.StatusOK || strings.Contains(strings.ToLower(body), "doing") {
			t.Errorf("GET %s: %d, or the word doing in it", path, code)
		}
		if strings.HasPrefix(path, "/tasks?") && !strings.Contains(body, `data-task="report" data-owner="`) {
			t.Errorf("GET %s: report not listed", path)
		}
	}
	if _, body := f.get("/tasks"); !strings.Contains(body, `<span class="status running">running</span>`) {
		t.Error("the task list does not say running")
	}
}

// TestTaskCharts: the task page plots the runs it lists: a dot per run
// for start lag, one per finished run for duration (a running one has
// none), and outcome bars whose heights add up to the runs; a task with no
// run says so.
func TestTaskCharts(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	var runs []easyjob.ExecutionInfo // newest first, one a minute, every third failed
	for i := range 20 {
		start := now.Add(-time.Duration(i) * time.Minute)
		r := easyjob.ExecutionInfo{ID: int64(100 - i), ScheduledAt: start.Add(-time.Duration(i) * 10 * time.Millisecond), StartedAt: start,
			FinishedAt: start.Add(time.Duration(i+1) * 100 * time.Millisecond), Status: repository.ExecSucceeded}
		if i%3 == 0 {
			r.Status = repository.ExecFailed
		}
		if i == 0 {
			r.FinishedAt, r.Status = time.Time{}, repository.ExecRunning
		}
		runs = append(runs, r)
	}
	cs := taskCharts(runs)
	lag, took, outcomes := cs[0], cs[1], cs[2]
	if len(lag.Dots) != 20 || len(took.Dots) != 19 || lag.Line == "" {
		t.Fatalf("lag %d dots, duration %d dots; want 20 and 19, joined", len(lag.Dots), len(took.Dots))
	}
	if lag.Dots[0].CX != lag.X0 || lag.Dots[19].CX != lag.X1 || lag.Dots[19].CY != lag.Y1 {
		t.Errorf("lag dots from %+v to %+v: want the oldest at the left, the newest (lag 0) at the right on the axis", lag.Dots[0], lag.Dots[19])
	}
	if top := took.YTicks[2]; top.Label != "2.0s" || took.Dots[0].CY != top.Y {
		t.Errorf("duration axis top %+v, oldest dot %+v: want 2.0s, at the top", top, took.Dots[0])
	}
	total, byClass := 0, map[string]int{}
	unit := outcomes.Y1 - outcomes.YTicks[2].Y // the top tick's height in runs
	for _, b := range outcomes.Bars {
		byClass[b.Class]++
		total += b.H
	}
	if top := outcomes.YTicks[2].Label; top != "1" || total != 20*unit || byClass["bad"] != 6 || byClass["other"] != 1 {
		t.Errorf("outcome bars %v, height %d (top %s, %d a run): want 20 runs, 6 failed, 1 running", byClass, total, top, unit)
	}
	if e := taskCharts(nil); e[0].Empty == "" || e[2].Empty == "" {
		t.Error("no run: the charts do not say so")
	}

	f := newFixture(t, Options{})
	_, body := f.get("/task?name=report")
	for _, want := range []string{`id="chart-lag"`, `id="chart-duration"`, `id="chart-outcomes"`, `<circle class="pt bad"`, `<rect class="bar ok"`} {
		if !strings.Contains(body, want) {
			t.Errorf("task page: no %s", want)
		}
	}
}

// TestFiresChart: fires per second by node over the timeline's window:
// stacked bars colored as the node's lane, chain steps not counted, and
// only the span read when the read hit its bound.
func TestFiresChart(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 5, 0, 0, time.UTC)
	nodes := []easyjob.NodeInfo{{ID: 1, Name: "a", Live: true}, {ID: 2, Name: "b", Live: true}}
	var runs []easyjob.ExecutionInfo
	for i := range 60 { // a minute: node 1 fires twice a second, node 2 once
		at := now.Add(-time.Duration(i) * time.Second)
		runs = append(runs, easyjob.ExecutionInfo{NodeID: 1, StartedAt: at}, easyjob.ExecutionInfo{NodeID: 1, StartedAt: at.Add(-time.Millisecond)},
			easyjob.ExecutionInfo{NodeID: 2, StartedAt: at.Add(-2 * time.Millisecond)}, easyjob.ExecutionInfo{NodeID: 2, ParentExecutionID: 9, StartedAt: at})
	}
	tl := buildTimeline(nodes, runs, now, time.Minute, false)
	c := firesChart(tl, runs)
	perClass := map[string]int{}
	for _, b := range c.Bars {
		perClass[b.Class] += b.H
	}
	full := c.Y1 - c.YTicks[2].Y
	if top := c.YTicks[2].Label; top != "5/s" || len(c.Keys) != 2 || c.Keys[1].Class != "c1" {
		t.Fatalf("axis top %s, keys %+v: want 5/s, nodes a and b", top, c.Keys)
	}
	// Node a's bars stand at 2/s and b's at 1/s over the minute (60 bars
	// each, heights rounded).
	if a, b := perClass["c0"], perClass["c1"]; math.Abs(float64(a)/60-float64(full)*2/5) > 1 || math.Abs(float64(b)/60-float64(full)/5) > 1 {
		t.Errorf("mean bar heights a %d, b %d (of %d for 5/s): want 2/s and 1/s", a/60, b/60, full)
	}
	tl = buildTimeline(nodes, runs[:40], now, time.Hour, true) // the newest 10 s only
	if c := firesChart(tl, runs[:40]); c.XTicks[0].Label < "12:04:50" {
		t.Errorf("truncated read: the axis starts at %s, want the oldest run read (12:04:50)", c.XTicks[0].Label)
	}
	f := newFixture(t, Options{})
	if _, body := f.get("/"); !strings.Contains(body, `id="chart-fires"`) {
		t.Error("the overview has no fires chart")
	}
}
