package repository

import (
	"context"
	"time"
)

// ViewStore holds the reads of an operator's view of a group (the
// dashboard): aggregates and pages whose cost does not grow with the
// number of tasks or the length of the history beyond one page.
//
// A task is stale when no live node registers it: no node that
// heartbeated within liveWithin and is not leaving published a task set
// (Node.TaskSet) naming it. A live node that published no set, or a set
// the store does not hold, is taken to register every task. A runtime
// schedule (Task.Dynamic) is never stale: no node registers it by name.
type ViewStore interface {
	// TaskCounts counts the tasks of group by TaskCount key, exactly, at
	// a cost that follows the tasks that are not plain waiting runtime
	// schedules (running, paused, finished, failing, registered in
	// code), not the size of the group.
	TaskCounts(ctx context.Context, group string, liveWithin time.Duration) ([]TaskCount, error)
	// TaskPage lists one page of the tasks of group that match q, ordered
	// by name (byte order), and how many match (see TaskPage.Total).
	TaskPage(ctx context.Context, group string, q TaskQuery) (TaskPage, error)
	// TaskTree lists the chain the task name belongs to: its root and
	// every descendant of that root, ordered by id; ErrTaskNotFound if
	// there is no such task.
	TaskTree(ctx context.Context, group, name string, liveWithin time.Duration) ([]TaskRow, error)
	// TaskRuns is History for the task with id task of group (no rows
	// when there is none): with the id known, the database plans the page
	// with that task's own statistics, so a page of a task with millions
	// of runs costs what a page of a small one does.
	TaskRuns(ctx context.Context, group string, task TaskID, f HistoryFilter) ([]Execution, error)
	// RecentExecutions lists the executions of group's tasks that started
	// at or after since, newest first, at most limit (0 means 100), with
	// TaskName filled.
	RecentExecutions(ctx context.Context, group string, since time.Time, limit int) ([]Execution, error)
	// CountFailures counts the executions of group's tasks that started at
	// or after since and ended failed, timed_out, abandoned or fenced, by
	// status (statuses with no execution are absent).
	CountFailures(ctx context.Context, group string, since time.Time) (map[ExecStatus]int, error)
}

// FailureStatuses are the execution statuses CountFailures counts.
var FailureStatuses = []ExecStatus{ExecFailed, ExecTimedOut, ExecAbandoned, ExecFenced}

// TaskCount is one bucket of TaskCounts: how many tasks share these
// values.
type TaskCount struct {
	Status TaskStatus
	Paused bool
	// NodeID is the claimer of doing tasks, 0 for the others.
	NodeID NodeID
	// Failing: the task's last run failed or timed out.
	Failing bool
	Stale   bool
	Count   int
}

// TaskQuery selects and pages tasks for TaskPage. Its filters combine
// with AND. Pages follow the names in byte order from a cursor (keyset
// paging): a page costs the same at the start of a million tasks as at
// their end.
type TaskQuery struct {
	// LiveWithin judges liveness for Stale (see ViewStore).
	LiveWithin time.Duration
	// Search keeps names containing it, ignoring case ("" keeps all).
	Search string
	// Status keeps tasks in that status ("" keeps all).
	Status TaskStatus
	// Paused keeps paused tasks (status paused, or doing and pausing).
	Paused bool
	// Failing keeps tasks whose last run failed or timed out.
	Failing bool
	// Stale keeps stale tasks.
	Stale bool
	// After starts the page at the first match whose name sorts after
	// it; Before makes the page the last matches whose names sort before
	// it (the page before a page whose first name it is). With neither,
	// the page is the first; After wins when both are set.
	After, Before string
	// Limit bounds the page (0 means 100).
	Limit int
}

// TaskCountLimit bounds the count of a TaskPage: counting a million
// matches would cost what listing them does.
const TaskCountLimit = 10000

// TaskPage is one page of TaskPage.
type TaskPage struct {
	Rows []TaskRow
	// Total counts the tasks matching the query, on all pages, up to
	// TaskCountLimit; TotalCapped: more than that match.
	Total       int
	TotalCapped bool
	// HasPrev, HasNext: matches sort before the first row, after the last.
	HasPrev, HasNext bool
}

// Next is the query of the page after p (q being p's query).
func (p TaskPage) Next(q TaskQuery) TaskQuery {
	if len(p.Rows) > 0 {
		q.After, q.Before = p.Rows[len(p.Rows)-1].Name, ""
	}
	return q
}

// Prev is the query of the page before p (q being p's query).
func (p TaskPage) Prev(q TaskQuery) TaskQuery {
	if len(p.Rows) > 0 {
		q.After, q.Before = "", p.Rows[0].Name
	}
	return q
}

// TaskRow is a task with what an operator's view adds to it.
type TaskRow struct {
	Task
	// Parent is the parent's name, "" for a root.
	Parent string
	// Stale: no live node registers the task.
	Stale bool
}
