package easyjob

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The reads of an operator's view (the dashboard): each costs a few
// aggregate or paged queries, whatever the number of tasks and the length
// of the history.

// Overview is the state of a group at one moment.
type Overview struct {
	Now time.Time `json:"now"` // store clock
	// Nodes are every node row, InFlight counted from the task table.
	Nodes []NodeInfo   `json:"nodes"`
	Tasks TaskTotals   `json:"tasks"`
	Since time.Time    `json:"failures_since"` // Now less FailureWindow
	Fails FailureCount `json:"failures"`
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
	TaskInfo
	Options repository.TaskOptions `json:"options"`
}

// TaskQuery selects and pages tasks for TaskPage (ordered by name); its
// filters combine with AND. Search keeps names containing it, ignoring
// case; Status keeps one status; Paused, Failing and Stale keep tasks that
// are so; Limit 0 means 100.
type TaskQuery struct {
	Search                 string
	Status                 repository.TaskStatus
	Paused, Failing, Stale bool
	Offset, Limit          int
}

// TaskPage is one page of tasks and how many match in all.
type TaskPage struct {
	Tasks []TaskView `json:"tasks"`
	Total int        `json:"total"`
}

// Overview reads the nodes, the task totals and the failures of the last
// FailureWindow in four queries.
func (c *Client) Overview(ctx context.Context) (Overview, error) {
	now, err := c.store.Now(ctx)
	if err != nil {
		return Overview{}, c.viewErr("overview", err)
	}
	ns, err := c.store.Nodes(ctx, c.group)
	if err != nil {
		return Overview{}, c.viewErr("overview", err)
	}
	counts, err := c.store.TaskCounts(ctx, c.group, c.live)
	if err != nil {
		return Overview{}, c.viewErr("overview", err)
	}
	since := now.Add(-FailureWindow)
	fails, err := c.store.CountFailures(ctx, c.group, since)
	if err != nil {
		return Overview{}, c.viewErr("overview", err)
	}
	o := Overview{Now: now, Since: since, Fails: fails}
	inFlight := map[repository.NodeID]int{}
	for _, k := range counts {
		o.Tasks.add(k)
		if k.Status == repository.TaskDoing && k.NodeID != 0 {
			inFlight[k.NodeID] += k.Count
		}
	}
	o.Nodes = c.nodeInfos(ns, now, inFlight)
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

// nodeInfos judges node rows by now and the client's LiveAfter and
// DeadAfter, numbering the live ones.
func (c *Client) nodeInfos(ns []repository.Node, now time.Time, inFlight map[repository.NodeID]int) []NodeInfo {
	out := make([]NodeInfo, len(ns))
	row := 0
	for i, n := range ns { // sorted by id, so row numbers follow
		age := max(now.Sub(n.HeartbeatAt), 0)
		ni := NodeInfo{
			ID: int64(n.ID), Name: n.Name, Weight: n.Weight, Counts: n.Counts,
			Live: age <= c.live && !n.Leaving, Leaving: n.Leaving, Dead: age > c.dead, HeartbeatAge: age,
			StartedAt: n.StartedAt, HeartbeatAt: n.HeartbeatAt, InFlight: inFlight[n.ID],
		}
		if ni.Live {
			row++
			ni.RowNumber = row
		}
		out[i] = ni
	}
	return out
}

// TaskPage lists one page of the group's tasks matching q, ordered by name,
// in one query (Now gives the store's clock the times refer to).
func (c *Client) TaskPage(ctx context.Context, q TaskQuery) (TaskPage, error) {
	p, err := c.store.TaskPage(ctx, c.group, repository.TaskQuery{
		LiveWithin: c.live, Search: q.Search, Status: q.Status, Paused: q.Paused, Failing: q.Failing, Stale: q.Stale,
		Offset: q.Offset, Limit: q.Limit,
	})
	if err != nil {
		return TaskPage{}, c.viewErr("task page", err)
	}
	return TaskPage{Total: p.Total, Tasks: taskViews(p.Rows)}, nil
}

// Chain returns the chain the task belongs to: its root first, then every
// descendant of the root by id (a parent before its children), in one
// query. An unknown task gives an error wrapping ErrTaskNotFound.
func (c *Client) Chain(ctx context.Context, name string) ([]TaskView, error) {
	rows, err := c.store.TaskTree(ctx, c.group, name, c.live)
	if err != nil {
		return nil, c.wrap("read", name, err)
	}
	return taskViews(rows), nil
}

// Runs lists the runs of the task with id (TaskInfo.ID) as History does
// (newest first, selected and paged by f). Knowing the id, the database
// reads one page of a task with millions of runs as fast as one of a
// small task. An id the group does not have gives no runs.
func (c *Client) Runs(ctx context.Context, id int64, f HistoryFilter) ([]ExecutionInfo, error) {
	xs, err := c.store.TaskRuns(ctx, c.group, repository.TaskID(id), f)
	if err != nil {
		return nil, fmt.Errorf("easyjob: runs of task %d: %w", id, err)
	}
	return execInfos(xs), nil
}

// RecentRuns lists the runs of the group's tasks that started at or after
// since, newest first, at most limit (0 means 100), in one query.
func (c *Client) RecentRuns(ctx context.Context, since time.Time, limit int) ([]ExecutionInfo, error) {
	xs, err := c.store.RecentExecutions(ctx, c.group, since, limit)
	if err != nil {
		return nil, c.viewErr("recent runs", err)
	}
	return execInfos(xs), nil
}

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
	if _, err := parseSchedule(cron, t.Options.Timezone); err != nil {
		return nil, fmt.Errorf("easyjob: reschedule %q: %w", name, err)
	}
	if t.ParentID == 0 && emptyCron(cron) {
		return nil, fmt.Errorf("%w: reschedule %q: a root task needs a cron expression", ErrInvalidCron, name)
	}
	now, err := c.store.Now(ctx)
	if err != nil {
		return nil, c.wrap("reschedule", name, err)
	}
	return NextFires(cron, t.Options.Timezone, now, n)
}

// emptyCron reports an expression without fields of its own.
func emptyCron(cron string) bool {
	s, err := parseSchedule(cron, "")
	return err == nil && s.empty()
}

// NextFires returns the first n fire times of cron in time zone tz ("" is
// UTC, a CRON_TZ= prefix wins) strictly after t, fewer when the
// expression runs out, none for an empty expression. An invalid one gives
// an error wrapping ErrInvalidCron.
func NextFires(cron, tz string, after time.Time, n int) ([]time.Time, error) {
	s, err := parseSchedule(cron, tz)
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for t := after; len(out) < n; {
		next, ok := s.next(t)
		if !ok {
			break
		}
		out = append(out, next)
		t = next
	}
	return out, nil
}

// viewErr names the group in a failed read.
func (c *Client) viewErr(what string, err error) error {
	return fmt.Errorf("easyjob: %s of group %q: %w", what, c.group, err)
}

func taskViews(rows []repository.TaskRow) []TaskView {
	out := make([]TaskView, len(rows))
	for i, r := range rows {
		out[i] = TaskView{TaskInfo: taskInfo(r.Task, r.Parent), Options: r.Options}
		out[i].Stale = r.Stale
	}
	return out
}

func execInfos(xs []repository.Execution) []ExecutionInfo {
	out := make([]ExecutionInfo, len(xs))
	for i, x := range xs {
		out[i] = ExecutionInfo{
			ID: x.ID, Task: x.TaskName, TaskID: int64(x.TaskID), ParentExecutionID: x.ParentExecutionID,
			NodeID: int64(x.NodeID), ScheduledAt: x.ScheduledAt, StartedAt: x.StartedAt, FinishedAt: x.FinishedAt,
			Status: x.Status, Error: x.Error, Attempt: x.Attempt, Misfire: string(x.Misfire),
		}
	}
	return out
}
