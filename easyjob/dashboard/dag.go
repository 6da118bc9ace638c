package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// A DAG fire (easyjob.Client.FireGraph) drawn as a Gantt chart: a row per
// run of each task of the graph, parents first (a sharded task's shards
// and a task's chain steps indented under it), each with a bar from its
// start to its end on one time axis from the fire, and the parents it
// waited for. The bars are SVG (a page's styles come from its style sheet
// only), the labels HTML, so the chart wraps on a phone.

// dagWidth is the width of a bar's SVG in its own units.
const dagWidth = 1000

// dagView is the chart of one fire.
type dagView struct {
	Graph easyjob.FireGraph
	Rows  []dagRow
	// Span is the axis: from the fire (or the first start, when earlier)
	// to the last end (the store's now while a run goes on).
	Span  time.Duration
	Ticks []string // the axis labels, evenly spread: +0 .. +Span
	W     int
}

// dagRow is one line of the chart: a run of a task, or a task with none.
type dagRow struct {
	Task, Label string // Label: the task, or its shard "name[i]"
	Depth       int    // indent: chain links, +1 for a shard
	After       string // the parents it waited for, in words
	Run         *easyjob.ExecutionInfo
	Node        string
	X, W        int // the bar, in SVG units
	Class       string
	Title       string
}

// buildDag lays out graph g; now ends the bars of runs still going.
func buildDag(g easyjob.FireGraph, s snapshot, now time.Time) dagView {
	v := dagView{Graph: g, W: dagWidth}
	from, to := g.Fire, g.Fire
	for _, st := range g.Steps {
		for _, r := range st.Runs {
			if !r.StartedAt.IsZero() && r.StartedAt.Before(from) {
				from = r.StartedAt
			}
			to = maxTime(to, endOf(r, now))
		}
	}
	v.Span = max(to.Sub(from), time.Millisecond)
	x := func(t time.Time) int { return int(float64(t.Sub(from)) / float64(v.Span) * dagWidth) }
	for i := range 5 {
		v.Ticks = append(v.Ticks, "+"+shortDur(v.Span*time.Duration(i)/4))
	}
	shards := map[string]int{}
	for _, st := range g.Steps {
		shards[st.Task] = st.Shards
	}
	for _, st := range g.Steps {
		var after []string
		for _, p := range st.Parents {
			if n := shards[p]; n > 0 {
				p = fmt.Sprintf("%s[0..%d]", p, n-1)
			}
			after = append(after, p)
		}
		if st.Chain != "" {
			after = append(after, st.Chain+" (chain step)")
		}
		add := func(label string, depth int, after string, r *easyjob.ExecutionInfo) {
			row := dagRow{Task: st.Task, Label: label, Depth: depth, After: after, Run: r}
			if r != nil {
				row.Node = s.nodeName(r.NodeID)
				row.X = x(r.StartedAt)
				row.W = max(x(endOf(*r, now))-row.X, 3)
				row.X = min(row.X, dagWidth-row.W)
				row.Class = runClass(*r)
				row.Title = runTitle(*r, row.Node)
			}
			v.Rows = append(v.Rows, row)
		}
		own := false
		for i := range st.Runs {
			if r := &st.Runs[i]; r.Shard == nil {
				add(st.Task, st.Depth, strings.Join(after, ", "), r)
				own = true
			}
		}
		if !own {
			add(st.Task, st.Depth, strings.Join(after, ", "), nil)
		}
		for sh := range st.Shards {
			label, ran := fmt.Sprintf("%s[%d]", st.Task, sh), false
			for i := range st.Runs {
				if r := &st.Runs[i]; r.Shard != nil && *r.Shard == sh {
					add(label, st.Depth+1, st.Task+" (split)", r)
					ran = true
				}
			}
			if !ran {
				add(label, st.Depth+1, st.Task+" (split)", nil)
			}
		}
	}
	return v
}

// endOf is when run r ended, now while it goes on.
func endOf(r easyjob.ExecutionInfo, now time.Time) time.Time {
	if r.FinishedAt.IsZero() {
		return maxTime(now, r.StartedAt)
	}
	return r.FinishedAt
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// readDag reads the graph of task name at fire (zero: its newest), once
// per refresh interval for everyone.
func (h *site) readDag(ctx context.Context, name string, fire time.Time) (easyjob.FireGraph, error) {
	key := "dag?" + name + "&" + fire.UTC().Format(time.RFC3339Nano)
	return cached(ctx, h.cache, key, func(ctx context.Context) (easyjob.FireGraph, error) {
		return h.client.FireGraph(ctx, name, fire)
	})
}

// dagData is the DAG page.
type dagData struct {
	Snap snapshot
	Task string
	Dag  dagView
}

// dag is GET /dag?name=NAME[&fire=TIME]: one fire of the task's graph,
// its newest by default.
func (h *site) dag(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("name")
	s, err := h.snapshot(r.Context())
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	fire, err := time.Parse(time.RFC3339Nano, q.Get("fire"))
	if err != nil {
		fire = time.Time{}
	}
	g, err := h.readDag(r.Context(), name, fire)
	if err != nil {
		h.readFailed(w, r, name, err)
		return
	}
	d := dagData{Snap: s, Task: name, Dag: buildDag(g, s, s.now())}
	h.render(w, r, http.StatusOK, "dag", page{Title: name + " · DAG fire", Now: s.now(), Data: d})
}

// runDag is the chart of the fire of run x of task name for its page,
// nil when the task is in no graph (or it cannot be read: the run's page
// shows the run all the same).
func (h *site) runDag(ctx context.Context, name string, x easyjob.ExecutionInfo, s snapshot) *dagView {
	g, err := h.readDag(ctx, name, x.ScheduledAt)
	if err != nil || len(g.Steps) < 2 {
		return nil
	}
	v := buildDag(g, s, s.now())
	return &v
}

// fireGraph is GET /api/v1/tasks/{name}/dag: one fire of the task's
// graph (easyjob.FireGraph), ?fire= or the newest.
func (a *API) fireGraph(w http.ResponseWriter, r *http.Request) error {
	fire, err := timeParam(r.URL.Query(), "fire")
	if err != nil {
		return err
	}
	g, err := a.client.FireGraph(r.Context(), r.PathValue("name"), fire)
	if err != nil {
		return err
	}
	for i := range g.Steps {
		if g.Steps[i].Runs == nil {
			g.Steps[i].Runs = []easyjob.ExecutionInfo{}
		}
	}
	writeJSON(w, http.StatusOK, g)
	return nil
}
