package dashboard

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// timeline is the picture of recent fires drawn as SVG by parts.html: one
// lane per node, a mark per run (colored by task; failures red,
// abandoned runs crossed, the re-run that recovered one ringed and linked
// to it; a chain step smaller, in the lane's lower band, linked to the
// run it followed), and each node's start and last heartbeat, so that a
// failover shows at a glance: one lane stops, the same colors go on in
// another.
type timeline struct {
	W, H, LabelW, Top int
	From, To          time.Time
	Lanes             []lane
	Ticks             []tick
	Marks             []mark
	Links             []link
	Steps             []link // from a run to each chain step it started
	Events            []event
	Legend            []legendItem
	Runs              int
	Truncated         bool
}

type lane struct {
	ID                int64 // the node's
	Y, H, TextY, DotY int
	Label             string
	State             string // live, leaving, suspect, dead, gone
}

type tick struct {
	X, Y1, Y2 int
	Label     string
}

type mark struct {
	X, Y, W, H   int
	CX, CY, R    int // center, and the radius of a ring
	Class, Title string
	Ring         bool
	// Cross is the path of the ✕ over an abandoned run, Flag that of the
	// triangle over a failed or timed out one ("" for none).
	Cross, Flag string
}

type link struct{ X1, Y1, X2, Y2 int }

type event struct {
	X, Y1, Y2 int
	Class     string // started, silent, leaving
	Title     string
}

type legendItem struct {
	Task  string
	Class string
	Runs  int
}

// Geometry of the SVG, in its own units (it scales to the page width).
const (
	tlWidth  = 1000
	tlLabelW = 170
	tlTop    = 22
	tlLaneH  = 30
	palette  = 12 // task color classes c0..c11 in style.css
)

// buildTimeline lays out runs (newest first) of the window [to-window, to]
// on the lanes of nodes.
func buildTimeline(nodes []easyjob.NodeInfo, runs []easyjob.ExecutionInfo, to time.Time, window time.Duration, truncated bool) timeline {
	tl := timeline{W: tlWidth, LabelW: tlLabelW, Top: tlTop, From: to.Add(-window), To: to, Runs: len(runs), Truncated: truncated}
	plotW := float64(tlWidth - tlLabelW - 8)
	x := func(t time.Time) int {
		f := float64(t.Sub(tl.From)) / float64(window)
		return tlLabelW + int(min(max(f, 0), 1)*plotW)
	}
	laneOf := tl.layLanes(nodes, runs)
	tl.H = tlTop + len(tl.Lanes)*tlLaneH + 8
	tl.Ticks = ticks(tl.From, to, window, x, tlTop-4, tl.H-8)

	type fireKey struct {
		task int64
		at   time.Time
	}
	abandoned := map[fireKey]int{} // index in tl.Marks
	byID := map[int64]int{}        // index in tl.Marks
	counts := map[string]int{}
	for i := len(runs) - 1; i >= 0; i-- { // oldest first: an abandoned run before its re-run
		r := runs[i]
		ln := tl.Lanes[laneOf[r.NodeID]]
		end := r.FinishedAt
		if end.IsZero() {
			end = to
		}
		x0 := x(r.StartedAt)
		m := mark{X: x0, Y: ln.Y + 5, W: max(x(end)-x0, 3), H: ln.H - 17, Class: runClass(r), Title: runTitle(r, ln.Label)}
		if r.ParentExecutionID != 0 {
			// A chain step runs on its parent's node right after it: drawn
			// where the parent is, it would hide it (and its siblings
			// each other) at any window longer than a few seconds.
			m.Y, m.H, m.Class = ln.Y+ln.H-10, 7, m.Class+" step"
			if j, ok := byID[r.ParentExecutionID]; ok {
				p := tl.Marks[j]
				tl.Steps = append(tl.Steps, link{X1: p.X + p.W/2, Y1: p.Y + p.H, X2: m.X + 1, Y2: m.Y})
			}
		}
		m.CX, m.CY, m.R = m.X+m.W/2, m.Y+m.H/2, m.H/2+4
		if r.Status == repository.ExecFailed || r.Status == repository.ExecTimedOut {
			m.Flag = fmt.Sprintf("M%d %dl4 -6l4 6z", m.CX-4, m.Y-1)
		}
		k := fireKey{r.TaskID, r.ScheduledAt}
		if r.Status == repository.ExecAbandoned {
			m.Cross = fmt.Sprintf("M%d %dl10 10m0 -10l-10 10", m.CX-5, m.CY-5)
			abandoned[k] = len(tl.Marks)
		} else if j, ok := abandoned[k]; ok {
			a := tl.Marks[j]
			tl.Links = append(tl.Links, link{X1: a.CX, Y1: a.CY, X2: m.CX, Y2: m.CY})
			m.Ring = true
			m.Title += "\nre-ran the fire its node abandoned"
			delete(abandoned, k)
		}
		byID[r.ID] = len(tl.Marks)
		tl.Marks = append(tl.Marks, m)
		counts[r.Task]++
	}
	tl.Events = nodeEvents(nodes, tl, laneOf, x)
	tl.Legend = legend(counts)
	return tl
}

// layLanes makes one lane per node row and per node id seen only in runs
// (a row since expired), in id order; it returns the lane of each id.
func (tl *timeline) layLanes(nodes []easyjob.NodeInfo, runs []easyjob.ExecutionInfo) map[int64]int {
	type laneNode struct {
		id          int64
		name, state string
	}
	var ls []laneNode
	known := map[int64]bool{}
	for _, n := range nodes {
		ls = append(ls, laneNode{n.ID, n.Name, nodeState(n)})
		known[n.ID] = true
	}
	for _, r := range runs {
		if !known[r.NodeID] {
			known[r.NodeID] = true
			ls = append(ls, laneNode{r.NodeID, fmt.Sprintf("node %d", r.NodeID), "gone"})
		}
	}
	slices.SortFunc(ls, func(a, b laneNode) int { return cmp.Compare(a.id, b.id) })
	laneOf := map[int64]int{}
	for i, n := range ls {
		y := tlTop + i*tlLaneH
		tl.Lanes = append(tl.Lanes, lane{ID: n.id, Y: y, H: tlLaneH, TextY: y + tlLaneH/2 + 4, DotY: y + tlLaneH/2,
			Label: truncate(fmt.Sprintf("%d · %s", n.id, n.name), 24), State: n.state})
		laneOf[n.id] = i
	}
	return laneOf
}

// ticks marks the time axis at a step that gives a handful of labels:
// clock times, dates for steps of a day or more.
func ticks(from, to time.Time, window time.Duration, x func(time.Time) int, y1, y2 int) []tick {
	const day = 24 * time.Hour
	step := 30 * day
	for _, s := range []time.Duration{10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute,
		2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute,
		time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, day, 2 * day, 7 * day} {
		if window/s <= 8 {
			step = s
			break
		}
	}
	layout := "15:04:05"
	if step >= day {
		layout = "Jan 2"
	}
	var out []tick
	for t := from.Truncate(step).Add(step); !t.After(to); t = t.Add(step) {
		out = append(out, tick{X: x(t), Y1: y1, Y2: y2, Label: t.UTC().Format(layout)})
	}
	return out
}

// nodeEvents marks, within the window, each node's start and the last
// heartbeat of a node that went silent or is leaving.
func nodeEvents(nodes []easyjob.NodeInfo, tl timeline, laneOf map[int64]int, x func(time.Time) int) []event {
	var out []event
	for _, n := range nodes {
		ln := tl.Lanes[laneOf[n.ID]]
		if n.StartedAt.After(tl.From) {
			out = append(out, event{X: x(n.StartedAt), Y1: ln.Y + 2, Y2: ln.Y + ln.H - 2, Class: "started",
				Title: fmt.Sprintf("%s started at %s", n.Name, n.StartedAt.UTC().Format("15:04:05"))})
		}
		if st := nodeState(n); st != "live" && n.HeartbeatAt.After(tl.From) {
			out = append(out, event{X: x(n.HeartbeatAt), Y1: ln.Y + 2, Y2: ln.Y + ln.H - 2, Class: st,
				Title: fmt.Sprintf("%s: %s, last heartbeat at %s", n.Name, st, n.HeartbeatAt.UTC().Format("15:04:05"))})
		}
	}
	return out
}

// legend lists the tasks with the most runs, with their colors.
func legend(counts map[string]int) []legendItem {
	out := make([]legendItem, 0, len(counts))
	for t, n := range counts {
		out = append(out, legendItem{Task: t, Class: taskColor(t), Runs: n})
	}
	slices.SortFunc(out, func(a, b legendItem) int {
		if a.Runs != b.Runs {
			return cmp.Compare(b.Runs, a.Runs)
		}
		return cmp.Compare(a.Task, b.Task)
	})
	return out[:min(len(out), palette)]
}

// runClass is the CSS class of a run's mark.
func runClass(r easyjob.ExecutionInfo) string {
	switch r.Status {
	case repository.ExecSucceeded:
		return "run " + taskColor(r.Task)
	case repository.ExecFailed, repository.ExecTimedOut:
		return "run bad"
	}
	return "run " + string(r.Status)
}

// taskColor gives every task the same color class on every refresh.
func taskColor(task string) string {
	h := fnv.New32a()
	h.Write([]byte(task))
	return fmt.Sprintf("c%d", h.Sum32()%palette)
}

func runTitle(r easyjob.ExecutionInfo, node string) string {
	s := fmt.Sprintf("%s · %s on %s", r.Task, r.Status, node)
	if r.Kind != "" { // why it ran: a manual run beside a cron one is no double fire
		s += " · " + string(r.Kind)
	}
	s += fmt.Sprintf("\nscheduled %s, started %s",
		r.ScheduledAt.UTC().Format("15:04:05.000"), r.StartedAt.UTC().Format("15:04:05.000"))
	if d := r.Duration(); d > 0 {
		s += ", took " + shortDur(d)
	}
	if r.Attempt > 1 {
		s += fmt.Sprintf(", attempt %d", r.Attempt)
	}
	if r.Error != "" {
		s += "\n" + truncate(r.Error, 120)
	}
	return s
}
