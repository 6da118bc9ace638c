package dashboard

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// chart is a small plot drawn as SVG by parts.html ("chart"), from runs
// a page already read: points joined by a line, or stacked bars, over a
// time axis. It scales to its box's width, like the timeline.
type chart struct {
	ID, Label string
	W, H      int
	// The plot area: x from X0 to X1, y from Y0 (top) to Y1 (bottom).
	X0, X1, Y0, Y1 int
	XTicks         []tick // labels at the foot, y XLabelY
	XLabelY        int
	YTicks         []yTick // labels left of the plot, ending at YLabelX
	YLabelX        int
	Line           string // polyline points, "" for none
	Dots           []dot
	Bars           []bar
	Keys           []legendItem // Task is the label
	Empty          string       // what the chart says when it has no data
}

type yTick struct {
	Y, TextY int
	Label    string
}

type dot struct {
	CX, CY       int
	Class, Title string
}

type bar struct {
	X, Y, W, H   int
	Class, Title string
}

// Chart geometry, in the SVG's own units.
const (
	chartW, chartH                      = 420, 160 // a task's charts, three abreast
	wideW                               = tlWidth  // the overview's, as wide as the timeline
	chartLeft, chartRight               = 52, 10
	chartTop, chartBottom               = 10, 22
	chartBins                           = 30 // bars of a task's outcome chart
	overviewBins                        = 60 // bars of the overview's fires per second
	minChartSpan          time.Duration = time.Minute
)

// newChart is an empty chart over [from, to] with its time axis.
func newChart(id, label string, w int, from, to time.Time) (chart, func(time.Time) int) {
	c := chart{ID: id, Label: label, W: w, H: chartH, X0: chartLeft, X1: w - chartRight, Y0: chartTop, Y1: chartH - chartBottom,
		XLabelY: chartH - 6, YLabelX: chartLeft - 5}
	span := to.Sub(from)
	x := func(t time.Time) int {
		f := float64(t.Sub(from)) / float64(span)
		return c.X0 + int(math.Round(min(max(f, 0), 1)*float64(c.X1-c.X0)))
	}
	c.XTicks = ticks(from, to, span, x, c.Y0, c.Y1)
	return c, x
}

// yScale gives the chart a y axis from 0 to a round top at or above
// top, labelled by label; it returns the scale's function.
func (c *chart) yScale(top float64, label func(float64) string) func(float64) int {
	top = niceCeil(top)
	y := func(v float64) int { return c.Y1 - int(math.Round(v/top*float64(c.Y1-c.Y0))) }
	for _, f := range []float64{0, 0.5, 1} {
		c.YTicks = append(c.YTicks, yTick{Y: y(f * top), TextY: y(f*top) + 4, Label: label(f * top)})
	}
	return y
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (1 for v <= 0).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// runSpan is the time axis of runs (newest first): from the oldest start to
// the newest, at least minChartSpan.
func runSpan(runs []easyjob.ExecutionInfo) (from, to time.Time) {
	from, to = runs[len(runs)-1].StartedAt, runs[0].StartedAt
	if d := to.Sub(from); d < minChartSpan {
		pad := (minChartSpan - d) / 2
		from, to = from.Add(-pad), to.Add(pad)
	}
	return from, to
}

// durationChart plots value of each run (newest first) that has one, as
// dots colored by outcome joined by a line.
func durationChart(id, label string, runs []easyjob.ExecutionInfo, value func(easyjob.ExecutionInfo) (time.Duration, bool)) chart {
	type pt struct {
		r easyjob.ExecutionInfo
		v time.Duration
	}
	var pts []pt
	top := time.Duration(0)
	for i := len(runs) - 1; i >= 0; i-- { // oldest first
		if v, ok := value(runs[i]); ok {
			pts = append(pts, pt{runs[i], v})
			top = max(top, v)
		}
	}
	if len(pts) == 0 {
		return chart{ID: id, Label: label, W: chartW, H: chartH, Empty: "no run to plot"}
	}
	from, to := runSpan(runs)
	c, x := newChart(id, label, chartW, from, to)
	y := c.yScale(float64(max(top, time.Millisecond)), func(v float64) string {
		if d := time.Duration(v); d > 0 && d < 10*time.Millisecond {
			return fmt.Sprintf("%.2gms", v/float64(time.Millisecond)) // shortDur has whole ms
		}
		return shortDur(time.Duration(v))
	})
	var line strings.Builder
	for _, p := range pts {
		cx, cy := x(p.r.StartedAt), y(float64(p.v))
		fmt.Fprintf(&line, "%d,%d ", cx, cy)
		c.Dots = append(c.Dots, dot{CX: cx, CY: cy, Class: outcome(p.r.Status),
			Title: fmt.Sprintf("%s: %s · run %d %s", p.r.StartedAt.UTC().Format("2006-01-02 15:04:05"), shortDur(p.v), p.r.ID, p.r.Status)})
	}
	c.Line = strings.TrimSpace(line.String())
	return c
}

// outcome is the chart class of a run's status: ok, bad (failed, timed
// out) or other.
func outcome(st repository.ExecStatus) string {
	switch st {
	case repository.ExecSucceeded:
		return "ok"
	case repository.ExecFailed, repository.ExecTimedOut:
		return "bad"
	}
	return "other"
}

// outcomeChart counts the runs (newest first) of each stretch of time by
// outcome, as stacked bars: succeeded, failed or timed out, other.
func outcomeChart(runs []easyjob.ExecutionInfo) chart {
	const id, label = "chart-outcomes", "runs by outcome over time"
	if len(runs) == 0 {
		return chart{ID: id, Label: label, W: chartW, H: chartH, Empty: "no run to plot"}
	}
	from, to := runSpan(runs)
	width := to.Sub(from) / chartBins
	counts := make([]map[string]int, chartBins)
	top := 0
	for _, r := range runs {
		i := min(int(r.StartedAt.Sub(from)/width), chartBins-1)
		if counts[i] == nil {
			counts[i] = map[string]int{}
		}
		counts[i][outcome(r.Status)]++
		top = max(top, counts[i]["ok"]+counts[i]["bad"]+counts[i]["other"])
	}
	c, x := newChart(id, label, chartW, from, to)
	y := c.yScale(float64(top), func(v float64) string { return fmt.Sprintf("%g", v) })
	c.Keys = []legendItem{{Task: "succeeded", Class: "ok"}, {Task: "failed / timed out", Class: "bad"}, {Task: "other", Class: "other"}}
	for i, n := range counts {
		if n == nil {
			continue
		}
		t0 := from.Add(time.Duration(i) * width)
		x0, x1 := x(t0), x(t0.Add(width))
		title := fmt.Sprintf("%s – %s: %d succeeded, %d failed or timed out, %d other",
			t0.UTC().Format("01-02 15:04:05"), t0.Add(width).UTC().Format("15:04:05"), n["ok"], n["bad"], n["other"])
		base := 0
		for _, k := range []string{"ok", "bad", "other"} {
			if n[k] == 0 {
				continue
			}
			yTop := y(float64(base + n[k]))
			c.Bars = append(c.Bars, bar{X: x0 + 1, Y: yTop, W: max(x1-x0-2, 1), H: y(float64(base)) - yTop, Class: k, Title: title})
			base += n[k]
		}
	}
	return c
}

// taskCharts are the task page's charts of the runs it lists (newest
// first): start lag and duration over time, and outcomes.
func taskCharts(runs []easyjob.ExecutionInfo) []chart {
	return []chart{
		durationChart("chart-lag", "start lag (started − scheduled) over time", runs, func(r easyjob.ExecutionInfo) (time.Duration, bool) {
			return max(r.StartedAt.Sub(r.ScheduledAt), 0), true
		}),
		durationChart("chart-duration", "run duration over time", runs, func(r easyjob.ExecutionInfo) (time.Duration, bool) {
			return r.Duration(), !r.FinishedAt.IsZero()
		}),
		outcomeChart(runs),
	}
}

// firesChart is the overview's fires per second over the timeline's
// window, by node (stacked bars, a node's color its lane's): the root
// fires among runs (newest first), the runs the timeline draws.
func firesChart(tl timeline, runs []easyjob.ExecutionInfo) chart {
	from, to, lanes := tl.From, tl.To, tl.Lanes
	laneOf := map[int64]int{}
	for i, ln := range lanes {
		laneOf[ln.ID] = i
	}
	if oldest := len(runs) - 1; tl.Truncated && oldest >= 0 && runs[oldest].StartedAt.After(from) {
		from = runs[oldest].StartedAt // older fires are missing: plot only the span read
	}
	width := max(to.Sub(from)/overviewBins, time.Second)
	bins := int(to.Sub(from)/width) + 1
	perNode := make([][]int, len(lanes)) // lane → bin → fires
	for i := range perNode {
		perNode[i] = make([]int, bins)
	}
	top := 0
	totals := make([]int, bins)
	for _, r := range runs {
		if r.ParentExecutionID != 0 || r.StartedAt.Before(from) {
			continue // a chain step is no fire
		}
		i := min(int(r.StartedAt.Sub(from)/width), bins-1)
		perNode[laneOf[r.NodeID]][i]++
		totals[i]++
		top = max(top, totals[i])
	}
	c, x := newChart("chart-fires", "fires per second by node", wideW, from, from.Add(time.Duration(bins)*width))
	secs := width.Seconds()
	y := c.yScale(float64(top)/secs, func(v float64) string { return fmt.Sprintf("%.3g/s", v) })
	if top == 0 {
		c.Empty = "no fire in this window"
	}
	for l, ln := range lanes {
		if slices.Max(append(perNode[l], 0)) > 0 {
			c.Keys = append(c.Keys, legendItem{Task: ln.Label, Class: nodeColor(l)})
		}
	}
	base := make([]int, bins)
	for l, counts := range perNode {
		for i, n := range counts {
			if n == 0 {
				continue
			}
			t0 := from.Add(time.Duration(i) * width)
			x0, x1 := x(t0), x(t0.Add(width))
			yTop := y(float64(base[i]+n) / secs)
			c.Bars = append(c.Bars, bar{X: x0, Y: yTop, W: max(x1-x0-1, 1), H: y(float64(base[i])/secs) - yTop, Class: nodeColor(l),
				Title: fmt.Sprintf("%s: %d fires from %s to %s (%.3g/s)", lanes[l].Label, n, t0.UTC().Format("15:04:05"), t0.Add(width).UTC().Format("15:04:05"), float64(n)/secs)})
			base[i] += n
		}
	}
	return c
}

// nodeColor is the color class of the node of lane l.
func nodeColor(l int) string { return fmt.Sprintf("c%d", l%palette) }
