package dashboard

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// The dashboard's read models, built over the client's store
// (easyjob.Client.Control): each costs a few aggregate or paged queries,
// whatever the number of tasks and the length of the history.

// Overview is the state of a group at one moment.
type Overview struct {
	Now time.Time `json:"now"` // store clock
	// Nodes are every node row, InFlight counted from the task table.
	Nodes []easyjob.NodeInfo `json:"nodes"`
	Tasks TaskTotals         `json:"tasks"`
	Since time.Time          `json:"failures_since"` // Now less FailureWindow
	Fails FailureCount       `json:"failures"`
	// Collisions names the tasks live nodes register with different code
	// (two services sharing the group and a task name), with who does.
	Collisions []string `json:"collisions,omitempty"`
	// live are the live nodes with their task sets: whether a runtime
	// schedule's handler runs somewhere (waiting).
	live []repository.NodeTasks
}

// FailureWindow is how far back Overview counts failures.
const FailureWindow = time.Hour

// FailureCount counts unsuccessful runs by status: failed, timed_out,
// abandoned (its node died), fenced (finished after its claim was lost).
type FailureCount map[repository.ExecStatus]int

// Total sums the counts.
func (f FailureCount) Total() int {
	n := 0
	for _, k := range f {
		n += k
	}
	return n
}

// TaskTotals counts the tasks of a group. A task counts once in Pending,
// Doing, Paused or Finished (by status) and also in Failing (its last run
// failed or timed out), Pausing (doing, parks when its fire ends) and
// Stale (no live node registers it) when those apply.
type TaskTotals struct {
	Total    int `json:"total"`
	Pending  int `json:"pending"`
	Doing    int `json:"doing"`
	Paused   int `json:"paused"`
	Finished int `json:"finished"`
	Pausing  int `json:"pausing"`
	Failing  int `json:"failing"`
	Stale    int `json:"stale"`
}

// TaskView is a task (Stale set) with its policies.
type TaskView struct {
	easyjob.TaskInfo
	Options repository.TaskOptions `json:"options"`
}

// TaskPage is one page of tasks, how many match in all (Capped: at least
// that many, see repository.TaskCountLimit), and the cursors of the pages
// around it: Prev for TaskQuery.Before, Next for TaskQuery.After, "" when
// there is no such page.
type TaskPage struct {
	Tasks  []TaskView `json:"tasks"`
	Total  int        `json:"total"`
	Capped bool       `json:"total_capped,omitempty"`
	Prev   string     `json:"prev_before,omitempty"`
	Next   string     `json:"next_after,omitempty"`
}

// readOverview reads the nodes, the task totals and the failures of the
// last FailureWindow in four queries.
func readOverview(ctx context.Context, c *easyjob.Client) (Overview, error) {
	store, group, live := c.Control(), c.Group(), c.LiveAfter()
	now, err := store.Now(ctx)
	if err != nil {
		return Overview{}, viewErr(c, "overview", err)
	}
	ns, err := store.Nodes(ctx, group)
	if err != nil {
		return Overview{}, viewErr(c, "overview", err)
	}
	counts, err := store.TaskCounts(ctx, group, live)
	if err != nil {
		return Overview{}, viewErr(c, "overview", err)
	}
	since := now.Add(-FailureWindow)
	fails, err := store.CountFailures(ctx, group, since)
	if err != nil {
		return Overview{}, viewErr(c, "overview", err)
	}
	o := Overview{Now: now, Since: since, Fails: fails}
	inFlight := map[repository.NodeID]int{}
	for _, k := range counts {
		o.Tasks.add(k)
		if k.Status == repository.TaskDoing && k.NodeID != 0 {
			inFlight[k.NodeID] += k.Count
		}
	}
	o.Nodes = c.NodeInfos(ns, now, inFlight)
	sets, err := repository.LiveTaskSets(ctx, store, group, live)
	if err != nil {
		return Overview{}, viewErr(c, "overview", err)
	}
	o.live = sets
	for _, k := range repository.Collisions(sets) {
		o.Collisions = append(o.Collisions, k.Name+": "+k.Describe())
	}
	return o, nil
}

// add counts one bucket.
func (t *TaskTotals) add(k repository.TaskCount) {
	t.Total += k.Count
	switch k.Status {
	case repository.TaskPending:
		t.Pending += k.Count
	case repository.TaskDoing:
		t.Doing += k.Count
		if k.Paused {
			t.Pausing += k.Count
		}
	case repository.TaskPaused:
		t.Paused += k.Count
	case repository.TaskFinished:
		t.Finished += k.Count
	}
	if k.Failing {
		t.Failing += k.Count
	}
	if k.Stale {
		t.Stale += k.Count
	}
}

// readTaskPage lists one page of the group's tasks matching q, ordered by
// name, in one query; q.LiveWithin is the client's LiveAfter.
func readTaskPage(ctx context.Context, c *easyjob.Client, q repository.TaskQuery) (TaskPage, error) {
	q.LiveWithin = c.LiveAfter()
	p, err := c.Control().TaskPage(ctx, c.Group(), q)
	if err != nil {
		return TaskPage{}, viewErr(c, "task page", err)
	}
	out := TaskPage{Total: p.Total, Capped: p.TotalCapped, Tasks: taskViews(p.Rows)}
	if p.HasPrev {
		out.Prev = p.Prev(q).Before
	}
	if p.HasNext {
		out.Next = p.Next(q).After
	}
	return out, nil
}

// readChain returns the chain the task belongs to: its root first, then every
// descendant of the root by id (a parent before its children), in one
// query. An unknown task gives an error wrapping ErrTaskNotFound.
func readChain(ctx context.Context, c *easyjob.Client, name string) ([]TaskView, error) {
	rows, err := c.Control().TaskTree(ctx, c.Group(), name, c.LiveAfter())
	if err != nil {
		return nil, fmt.Errorf("easyjob: read %q: %w", name, err)
	}
	return taskViews(rows), nil
}

// readRuns lists the runs of the task with id (TaskInfo.ID) as History does
// (newest first, selected and paged by f). Knowing the id, the database
// reads one page of a task with millions of runs as fast as one of a
// small task. An id the group does not have gives no runs.
func readRuns(ctx context.Context, c *easyjob.Client, id int64, f easyjob.HistoryFilter) ([]easyjob.ExecutionInfo, error) {
	xs, err := c.Control().TaskRuns(ctx, c.Group(), repository.TaskID(id), f)
	if err != nil {
		return nil, fmt.Errorf("easyjob: runs of task %d: %w", id, err)
	}
	return easyjob.ExecutionInfos(xs), nil
}

// readRecentRuns lists the runs of the group's tasks that started at or after
// since, newest first, at most limit (0 means 100), in one query.
func readRecentRuns(ctx context.Context, c *easyjob.Client, since time.Time, limit int) ([]easyjob.ExecutionInfo, error) {
	xs, err := c.Control().RecentExecutions(ctx, c.Group(), since, limit)
	if err != nil {
		return nil, viewErr(c, "recent runs", err)
	}
	return easyjob.ExecutionInfos(xs), nil
}

func taskViews(rows []repository.TaskRow) []TaskView {
	out := make([]TaskView, len(rows))
	for i, r := range rows {
		out[i] = TaskView{TaskInfo: easyjob.TaskInfoOf(r.Task, r.Parent), Options: r.Options}
		out[i].Stale = r.Stale
	}
	return out
}

// markWaiting sets Waiting on t when it is a runtime schedule whose
// handler none of the live nodes registers (and clears Stale on it: a
// runtime schedule is data, not code).
func markWaiting(t *easyjob.TaskInfo, live []repository.NodeTasks) {
	if !t.Dynamic {
		return
	}
	t.Stale, t.Waiting = false, true
	for _, n := range live {
		if n.Registers(t.Handler) {
			t.Waiting = false
			return
		}
	}
}

// viewErr names the group in a failed read.
func viewErr(c *easyjob.Client, what string, err error) error {
	return fmt.Errorf("easyjob: %s of group %q: %w", what, c.Group(), err)
}
