package easyjob

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/calendar"
	"github.com/easyjob-go/easyjob/easyjob/internal/explain"
	"github.com/easyjob-go/easyjob/easyjob/internal/forecast"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// PreviewReschedule checks cron for the task as Reschedule does (in the
// task's time zone; only a child may have none) and returns the first n
// fires it would have after the store's now, without changing anything.
// An invalid expression gives an error wrapping ErrInvalidCron, an
// unknown task one wrapping ErrTaskNotFound.
func (c *Client) PreviewReschedule(ctx context.Context, name, cron string, n int) ([]time.Time, error) {
	t, err := c.store.Task(ctx, c.group, name)
	if err != nil {
		return nil, c.wrap("reschedule", name, err)
	}
	sched, err := schedule.Parse(cron, t.Options.Timezone)
	if err != nil {
		return nil, fmt.Errorf("easyjob: reschedule %q: %w", name, err)
	}
	if t.ParentID == 0 && emptyCron(cron) {
		return nil, fmt.Errorf("%w: reschedule %q: a root task needs a cron expression", ErrInvalidCron, name)
	}
	now, err := c.store.Now(ctx)
	if err != nil {
		return nil, c.wrap("reschedule", name, err)
	}
	return sched.ForTask(t.Name, t.Options, t.CreatedAt).Fires(now, n), nil
}

// emptyCron reports an expression without fields of its own.
func emptyCron(cron string) bool {
	s, err := schedule.Parse(cron, "")
	return err == nil && s.Empty()
}

// NextFires returns the first n fire times of cron in time zone tz ("" is
// UTC, a CRON_TZ= prefix wins) strictly after t, fewer when the
// expression runs out, none for an empty expression. An invalid one gives
// an error wrapping ErrInvalidCron.
func NextFires(cron, tz string, after time.Time, n int) ([]time.Time, error) {
	s, err := schedule.Parse(cron, tz)
	if err != nil {
		return nil, err
	}
	return s.Fires(after, n), nil
}

// ExecutionInfos converts history rows read from the store (Client.Control)
// as History does.
func ExecutionInfos(xs []repository.Execution) []ExecutionInfo {
	out := make([]ExecutionInfo, len(xs))
	for i, x := range xs {
		out[i] = ExecutionInfo{
			ID: x.ID, Task: x.TaskName, TaskID: int64(x.TaskID), ParentExecutionID: x.ParentExecutionID,
			NodeID: int64(x.NodeID), ScheduledAt: x.ScheduledAt, StartedAt: x.StartedAt, FinishedAt: x.FinishedAt,
			Status: x.Status, Error: x.Error, Attempt: x.Attempt, Misfire: string(x.Misfire), Kind: x.Kind,
			Args: rawArgs(x.Args), Revision: x.Revision,
		}
	}
	return out
}

// Explanation says, from what the store holds, what comes for a task and
// what became of one of its fires (Client.Explain).
type Explanation struct {
	Task TaskInfo  `json:"task"`
	Now  time.Time `json:"now"` // the store's clock
	// Next are the task's next fires (its next start, then its cron's),
	// none when it fires no more on its own: Blocked says why (paused,
	// stale, finished, a chain step). A schedule waiting for a node with
	// its handler has both: the fires come once one runs.
	Next    []time.Time `json:"next,omitempty"`
	Blocked string      `json:"blocked,omitempty"`
	// Fire is the verdict on the time asked about, nil when none was.
	Fire *FireVerdict `json:"fire,omitempty"`
}

// FireVerdict is what became of the fire at a time: its runs, or why it
// had none.
type FireVerdict struct {
	At time.Time `json:"at"` // the time asked about
	// Fire is At when it is a fire of the definition in force then
	// (Scheduled), else the last fire before it; zero when there is none.
	Fire      time.Time `json:"fire,omitzero"`
	Scheduled bool      `json:"scheduled"`
	// Cron is the definition's cron then ("" when the task did not exist).
	Cron string `json:"cron,omitempty"`
	// Runs are the runs recorded for Fire, newest first.
	Runs    []ExecutionInfo `json:"runs"`
	Verdict string          `json:"verdict"`
}

// explainFires is how many fires ahead Explain lists.
const explainFires = 10

// Explain answers "when will the task run next, and why did (or didn't)
// the fire at time at run?" from the task row, its versions, the audit
// log and the runs recorded for that fire; a zero at asks only the
// former. Finding a fire's runs walks the task's history newest first, so
// its cost follows the runs since then.
func (c *Client) Explain(ctx context.Context, name string, at time.Time) (Explanation, error) {
	t, err := c.store.Task(ctx, c.group, name)
	if err != nil {
		return Explanation{}, c.wrap("explain", name, err)
	}
	info, err := c.info(ctx, t)
	if err != nil {
		return Explanation{}, err
	}
	one := []TaskInfo{info}
	if err := c.markStale(ctx, one); err != nil { // Stale and Waiting judged
		return Explanation{}, c.wrap("explain", name, err)
	}
	info = one[0]
	now, err := c.store.Now(ctx)
	if err != nil {
		return Explanation{}, c.wrap("explain", name, err)
	}
	revs, err := c.store.Revisions(ctx, c.group, name)
	if err != nil {
		return Explanation{}, c.wrap("explain", name, err)
	}
	audit, err := c.store.Audit(ctx, c.group, repository.AuditFilter{Task: name, Limit: 1000})
	if err != nil {
		return Explanation{}, c.wrap("explain", name, err)
	}
	f := explain.Facts{Now: now, Task: t, Revisions: revs, Audit: audit}
	if t.Options.Calendar != "" {
		cs, err := c.store.Calendars(ctx, c.group)
		if err != nil {
			return Explanation{}, c.wrap("explain", name, err)
		}
		f.Calendars, _ = calendar.NewSet(cs)
	}
	out := Explanation{Task: info, Now: now}
	out.Next, out.Blocked = explain.Ahead(f, info.Stale, info.Waiting, explainFires)
	if at.IsZero() {
		return out, nil
	}
	fire := explain.FireOf(f, at)
	if !fire.Fire.IsZero() {
		if f.Runs, err = c.store.History(ctx, c.group, name, repository.HistoryFilter{Fire: fire.Fire, Limit: 100}); err != nil {
			return Explanation{}, c.wrap("explain", name, err)
		}
		nodes, err := c.store.Nodes(ctx, c.group)
		if err != nil {
			return Explanation{}, c.wrap("explain", name, err)
		}
		f.Names = func(id repository.NodeID) string {
			for _, n := range nodes {
				if n.ID == id {
					return n.Name
				}
			}
			return ""
		}
	}
	f.Waiting = info.Waiting
	if len(f.Runs) == 0 && !fire.Fire.IsZero() && fire.Fire.Before(now) {
		if f.Covering, err = c.covering(ctx, t, fire.Fire); err != nil {
			return Explanation{}, c.wrap("explain", name, err)
		}
	}
	a := explain.At(f, at)
	out.Fire = &FireVerdict{At: at, Fire: a.Fire, Scheduled: a.Scheduled, Cron: a.Cron, Runs: ExecutionInfos(f.Runs), Verdict: a.Verdict}
	return out, nil
}

// coveringLookback bounds the earlier fires Explain looks through for a
// run that was still running at a fire without runs of its own.
const coveringLookback = 20

// covering finds the run of an earlier fire of the task that was still
// running at fire: the newest earlier fire with runs, if its newest run
// ended after fire (or has not ended). Each step is one indexed read.
func (c *Client) covering(ctx context.Context, t repository.Task, fire time.Time) (*repository.Execution, error) {
	if t.Cron == "" {
		return nil, nil
	}
	name := t.Name
	s, err := schedule.Parse(t.Cron, t.Options.Timezone)
	if err != nil {
		return nil, nil //nolint:nilerr // a cron that does not parse covers nothing; Explain says so itself
	}
	s = s.ForTask(t.Name, t.Options, t.CreatedAt)
	at := fire
	for range coveringLookback {
		prev, ok := s.Prev(at.Add(-time.Nanosecond))
		if !ok {
			return nil, nil
		}
		runs, err := c.store.History(ctx, c.group, name, repository.HistoryFilter{Fire: prev, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(runs) > 0 {
			if x := runs[0]; x.FinishedAt.IsZero() || x.FinishedAt.After(fire) {
				return &x, nil
			}
			return nil, nil
		}
		at = prev
	}
	return nil, nil
}

// Forecast is the fires a group's schedules will have over a horizon,
// counted per second (Client.Forecast): where the storms are.
type Forecast struct {
	From    time.Time     `json:"from"`    // store clock, whole seconds
	Horizon time.Duration `json:"horizon"` // whole seconds
	// Schedules counts the tasks whose fires are counted: roots with a
	// cron, neither paused nor finished (a chain step runs after its
	// parent). Unparsed counts those whose cron does not parse here (a
	// time zone this host lacks).
	Schedules int `json:"schedules"`
	Unparsed  int `json:"unparsed,omitempty"`
	// Total is the fires in the horizon.
	Total int64 `json:"total"`
	// Peaks are the busiest seconds, busiest first (ForecastPeaks of
	// them; Top ranks more).
	Peaks []ForecastSecond `json:"peaks"`
	// Minutes are the fires per minute from From.
	Minutes []int `json:"minutes"`
	// Seconds are the seconds with at least one fire, in time order.
	Seconds []ForecastSecond `json:"seconds,omitempty"`
}

// ForecastSecond is one second of a Forecast and its fires.
type ForecastSecond struct {
	At    time.Time `json:"at"`
	Fires int       `json:"fires"`
}

// ForecastPeaks is how many busiest seconds Forecast.Peaks lists.
const ForecastPeaks = 10

// forecastPage is how many tasks Client.Forecast reads a page: a
// million schedules are 200 statements, none of them a giant one.
const forecastPage = 5000

// Top returns the n busiest seconds of f, busiest first (the earlier of
// equals first).
func (f Forecast) Top(n int) []ForecastSecond {
	s := append([]ForecastSecond{}, f.Seconds...)
	slices.SortStableFunc(s, func(a, b ForecastSecond) int { return b.Fires - a.Fires })
	return s[:min(max(n, 0), len(s))]
}

// Forecast counts the fires of the group's schedules from from (zero: the
// store's now) over horizon (at most 7 days), second by second, as their
// crons, time zones, windows, spreads and jitters place them; paused and
// finished tasks and chain steps are left out, and so are the fires the
// tasks' exclusion calendars skip. It reads the tasks in pages
// (TaskPage), keeping counts, not tasks. A horizon out of range gives an
// error wrapping ErrInvalidOption.
func (c *Client) Forecast(ctx context.Context, from time.Time, horizon time.Duration) (Forecast, error) {
	if from.IsZero() {
		now, err := c.store.Now(ctx)
		if err != nil {
			return Forecast{}, fmt.Errorf("easyjob: forecast of group %q: %w", c.group, err)
		}
		from = now
	}
	fc, err := forecast.New(from, horizon)
	if err != nil {
		return Forecast{}, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	cs, err := c.store.Calendars(ctx, c.group)
	if err != nil {
		return Forecast{}, fmt.Errorf("easyjob: forecast of group %q: read calendars: %w", c.group, err)
	}
	cals, _ := calendar.NewSet(cs) // a calendar that does not parse excludes nothing, as on the nodes
	fc.Calendars(cals)
	q := repository.TaskQuery{Limit: forecastPage, LiveWithin: c.live}
	for {
		p, err := c.store.TaskPage(ctx, c.group, q)
		if err != nil {
			return Forecast{}, fmt.Errorf("easyjob: forecast of group %q: read tasks: %w", c.group, err)
		}
		for i := range p.Rows {
			fc.Add(&p.Rows[i].Task)
		}
		if !p.HasNext || len(p.Rows) == 0 {
			break
		}
		q = p.Next(q)
	}
	r := fc.Result()
	out := Forecast{From: r.From, Horizon: r.Horizon, Schedules: r.Tasks, Unparsed: r.Skipped, Total: r.Total, Minutes: r.Buckets(time.Minute)}
	out.Seconds = make([]ForecastSecond, len(r.Seconds))
	for i, s := range r.Seconds {
		out.Seconds[i] = ForecastSecond(s)
	}
	out.Peaks = out.Top(ForecastPeaks)
	return out, nil
}

// FireGraph is one fire of a DAG (Parents, Shards), the chain steps
// (Parent) after its tasks included, as Client.FireGraph reads it.
type FireGraph struct {
	// Task is the task asked about; Fire the fire: the scheduled time the
	// roots' runs and every step's run of it share (zero when the graph
	// has not fired yet).
	Task string    `json:"task"`
	Fire time.Time `json:"fire,omitzero"`
	// Steps are the graph's tasks in topological order (parents first,
	// then by registration), a chain step right after the task it
	// follows.
	Steps []FireStep `json:"steps"`
}

// FireStep is one task of a FireGraph and its runs of the fire.
type FireStep struct {
	Task string `json:"task"`
	// Parents are the DAG parents the step waited for (a sharded parent
	// named once, for all its shards); Chain the task it follows as a
	// chain step (Parent), on the node of that task's run; Depth the chain
	// links that lead to it (0 for a root or a DAG step).
	Parents []string `json:"parents,omitempty"`
	Chain   string   `json:"chain,omitempty"`
	Depth   int      `json:"depth"`
	// Shards is the number of shards of a sharded task (0 for none).
	Shards int `json:"shards,omitempty"`
	// Runs are the task's runs of the fire, oldest first, retries
	// included: a sharded task's own run (its split), then its shards'
	// runs, each with Shard. None when the fire has not reached the task,
	// or skipped it.
	Runs []ExecutionInfo `json:"runs"`
}

// FireGraph reads one fire of the graph task name belongs to: every task
// joined to it by Parents, Parent or Shards edges, in topological order,
// with its runs of the fire at fire (zero: the newest fire of the
// graph's roots). A task in no DAG or chain is a graph of one step. It
// reads the task's row (and the group's rows when it is in a graph,
// repository.Task.InGraph), and the runs of one fire of each task and shard
// (the retries of a failed run among the 100 runs after it): the cost
// follows the runs recorded since the fire. An unknown task gives an
// error wrapping ErrTaskNotFound.
func (c *Client) FireGraph(ctx context.Context, name string, fire time.Time) (FireGraph, error) {
	t, err := c.store.Task(ctx, c.group, name)
	if err != nil {
		return FireGraph{}, c.wrap("graph of", name, err)
	}
	ts := []repository.Task{t}
	if t.InGraph() {
		// The group's rows, for the edges (a task alone, the usual case in
		// a group of many schedules, costs one row).
		if ts, err = c.store.Tasks(ctx, c.group); err != nil {
			return FireGraph{}, c.wrap("graph of", name, err)
		}
	}
	g, ok := newTaskGraph(ts, name)
	if !ok {
		return FireGraph{}, c.wrap("graph of", name, ErrTaskNotFound)
	}
	out := FireGraph{Task: name, Fire: fire, Steps: g.steps}
	if fire.IsZero() {
		if out.Fire, err = c.newestFire(ctx, g); err != nil || out.Fire.IsZero() {
			return out, err
		}
	}
	for i := range out.Steps {
		st := &out.Steps[i]
		t := g.rows[st.Task]
		if st.Runs, err = c.fireRuns(ctx, t, out.Fire); err != nil {
			return FireGraph{}, c.wrap("graph of", name, err)
		}
		for sh := range st.Shards {
			rs, err := c.fireRuns(ctx, g.rows[fmt.Sprintf("%s[%d]", st.Task, sh)], out.Fire)
			if err != nil {
				return FireGraph{}, c.wrap("graph of", name, err)
			}
			for _, r := range rs {
				r.Task, r.Shard, r.Shards = st.Task, &sh, st.Shards
				st.Runs = append(st.Runs, r)
			}
		}
	}
	return out, nil
}

// taskGraph is the graph of one task: its rows by name (shards' too) and
// its steps in order, without runs.
type taskGraph struct {
	rows  map[string]repository.Task
	steps []FireStep
}

// newTaskGraph finds the graph of task name among the group's rows ts; it
// reports false when there is no such task.
func newTaskGraph(ts []repository.Task, name string) (taskGraph, bool) {
	g := taskGraph{rows: make(map[string]repository.Task, len(ts))}
	byID := make(map[repository.TaskID]string, len(ts))
	for _, t := range ts {
		g.rows[t.Name], byID[t.ID] = t, t.Name
	}
	t, ok := g.rows[name]
	if !ok {
		return g, false
	}
	if t.Options.ShardOf != "" {
		name = t.Options.ShardOf
	}
	// The edges between tasks (a shard row counts as its task).
	step := map[string]*FireStep{}
	next := map[string][]string{} // parent -> children, both kinds
	near := map[string][]string{} // both directions
	for _, t := range ts {
		if t.Options.ShardOf != "" {
			continue
		}
		s := &FireStep{Task: t.Name, Shards: t.Options.Shards}
		if s.Shards < 2 {
			s.Shards = 0
		}
		for _, p := range t.Options.Parents.List() {
			if of := g.rows[p].Options.ShardOf; of != "" {
				p = of
			}
			if !slices.Contains(s.Parents, p) {
				s.Parents = append(s.Parents, p)
			}
		}
		if t.ParentID != 0 {
			s.Chain = byID[t.ParentID]
		}
		for _, p := range append(slices.Clone(s.Parents), s.Chain) {
			if p != "" {
				next[p] = append(next[p], t.Name)
				near[p], near[t.Name] = append(near[p], t.Name), append(near[t.Name], p)
			}
		}
		step[t.Name] = s
	}
	// The graph: every task reachable from name either way.
	in := map[string]bool{name: true}
	for todo := []string{name}; len(todo) > 0; {
		n := todo[0]
		todo = todo[1:]
		for _, m := range near[n] {
			if !in[m] && step[m] != nil {
				in[m] = true
				todo = append(todo, m)
			}
		}
	}
	// Topological order (Kahn): parents first, ties by id; a chain step
	// ready once its task is out goes right after it.
	byOrder := func(a, b string) int { return cmp.Compare(g.rows[a].ID, g.rows[b].ID) }
	waiting := map[string]int{}
	var ready []string
	for n := range in {
		s := step[n]
		for _, p := range append(slices.Clone(s.Parents), s.Chain) {
			if in[p] { // a parent no row holds any more waits for nothing
				waiting[n]++
			}
		}
		if waiting[n] == 0 {
			ready = append(ready, n)
		}
	}
	slices.SortFunc(ready, byOrder)
	depth := map[string]int{}
	for len(ready) > 0 {
		n := ready[0]
		ready = ready[1:]
		s := step[n]
		if s.Chain != "" {
			s.Depth = depth[s.Chain] + 1
		}
		depth[n] = s.Depth
		g.steps = append(g.steps, *s)
		kids := slices.Clone(next[n])
		slices.SortFunc(kids, byOrder)
		var chained []string
		for _, k := range kids {
			if waiting[k]--; waiting[k] == 0 && in[k] {
				if step[k].Chain == n {
					chained = append(chained, k)
				} else {
					ready = append(ready, k)
				}
			}
		}
		ready = append(chained, ready...)
	}
	return g, true
}

// newestFire is the newest fire of the graph's roots (their newest first
// attempt's scheduled time); zero when none has run.
func (c *Client) newestFire(ctx context.Context, g taskGraph) (time.Time, error) {
	var fire time.Time
	for _, s := range g.steps {
		if len(s.Parents) > 0 || s.Chain != "" {
			continue
		}
		xs, err := c.store.History(ctx, c.group, s.Task, repository.HistoryFilter{Limit: 20})
		if err != nil {
			return time.Time{}, c.wrap("graph of", s.Task, err)
		}
		for _, x := range xs {
			if x.Attempt <= 1 {
				if x.ScheduledAt.After(fire) {
					fire = x.ScheduledAt
				}
				break
			}
		}
	}
	return fire, nil
}

// fireRuns lists the runs of task row t for the fire at fire, oldest
// first: those scheduled then, and the retries after the last of them
// when it failed.
func (c *Client) fireRuns(ctx context.Context, t repository.Task, fire time.Time) ([]ExecutionInfo, error) {
	if t.Name == "" {
		return nil, nil // a shard not written yet
	}
	xs, err := c.store.History(ctx, c.group, t.Name, repository.HistoryFilter{Fire: fire, Limit: 100})
	if err != nil || len(xs) == 0 {
		return nil, err
	}
	slices.Reverse(xs)
	last := xs[len(xs)-1]
	if t.Options.MaxRetries > 0 && (last.Status == repository.ExecFailed || last.Status == repository.ExecTimedOut) {
		later, err := c.store.History(ctx, c.group, t.Name, repository.HistoryFilter{Since: last.StartedAt, Limit: 100})
		if err != nil {
			return nil, err
		}
		slices.Reverse(later)
		for _, x := range later {
			if x.ID <= last.ID {
				continue
			}
			if x.Attempt <= 1 {
				break // the next fire's
			}
			xs = append(xs, x)
		}
	}
	return ExecutionInfos(xs), nil
}
