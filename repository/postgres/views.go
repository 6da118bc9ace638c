package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// liveSets is the WITH list that judges staleness (see
// repository.ViewStore): live(names) holds the task set of each live node
// of the group, NULL for a node that registers everything; its two
// arguments are the group and the liveness window in microseconds.
const liveSets = `live AS (
  SELECT s.names FROM easyjob_nodes n LEFT JOIN easyjob_task_sets s ON s.id = n.task_set
  WHERE n.group_name = ? AND NOT n.leaving
    AND n.heartbeat_at >= now() - (?::bigint * interval '1 microsecond')
),
everything AS (SELECT EXISTS (SELECT 1 FROM live WHERE names IS NULL) AS yes),
registered AS (SELECT DISTINCT unnest(names) AS name FROM live WHERE names IS NOT NULL)`

// staleExpr is true for a task t of the group that no live node registers;
// never for a runtime schedule (dynamic), which no node registers by name.
const staleExpr = `(NOT t.dynamic AND NOT (SELECT yes FROM everything)
  AND NOT EXISTS (SELECT 1 FROM registered r WHERE r.name = t.name))`

// failingExpr is true for a task t whose last run failed or timed out.
const failingExpr = `(t.last_status IN ('failed', 'timed_out'))`

// notableExpr is true for a task t that TaskCounts counts row by row
// (the predicate of easyjob_tasks_notable_idx, with the running ones of
// easyjob_tasks_doing_group_idx): every other task of the group is a plain
// waiting runtime schedule, pending, not paused, not failing, never stale.
const notableExpr = `(t.status = 'doing' OR t.status IN ('paused', 'finished') OR t.paused
  OR t.last_status IN ('failed', 'timed_out') OR NOT t.dynamic)`

// TaskCounts counts the notable tasks of group by status, pause, claimer,
// failing and stale in one aggregate over their indexes, and the plain
// ones as the group's total (easyjob_task_totals) less the notable.
func (s *Store) TaskCounts(ctx context.Context, group string, liveWithin time.Duration) ([]repository.TaskCount, error) {
	q := `WITH ` + liveSets + `,
notable AS (
  SELECT t.status, t.paused, CASE WHEN t.status = 'doing' THEN coalesce(t.node_id, 0) ELSE 0 END AS node,
    ` + failingExpr + ` AS failing, ` + staleExpr + ` AS stale, count(*) AS n
  FROM easyjob_tasks t
  WHERE t.group_name = ? AND t.status <> 'removed' AND ` + notableExpr + `
  GROUP BY 1, 2, 3, 4, 5
)
SELECT status, paused, node, failing, stale, n FROM notable
UNION ALL
SELECT 'pending', false, 0, false, false,
  (SELECT coalesce(sum(delta), 0) FROM easyjob_task_totals WHERE group_name = ?) - (SELECT coalesce(sum(n), 0) FROM notable)`
	rows, err := s.db.QueryContext(ctx, q, group, micros(liveWithin), group, group)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: task counts of %q: %w", group, err)
	}
	defer rows.Close()
	var out []repository.TaskCount
	for rows.Next() {
		var c repository.TaskCount
		if err := rows.Scan(&c.Status, &c.Paused, &c.NodeID, &c.Failing, &c.Stale, &c.Count); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: task counts of %q: %w", group, err)
		}
		if c.Count > 0 {
			out = append(out, c)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: task counts of %q: %w", group, err)
	}
	s.foldTotals(ctx, group)
	return out, nil
}

// foldTotalsAfter is how many delta rows of a group TaskCounts lets pile
// up before it folds them into one.
const foldTotalsAfter = 256

// foldTotals replaces the delta rows of group by their sum when there are
// many (a batch creation appends one per statement). Deleting and
// inserting in one statement keeps the sum whatever runs beside it: a
// concurrent fold deletes only the rows this one did not. Best effort: a
// failure leaves the rows, which still sum right.
func (s *Store) foldTotals(ctx context.Context, group string) {
	_, _ = s.db.ExecContext(ctx, `WITH many AS (
  SELECT count(*) > ?::int AS yes FROM (SELECT 1 FROM easyjob_task_totals WHERE group_name = ? LIMIT ?::int + 1) c
), gone AS (
  DELETE FROM easyjob_task_totals WHERE group_name = ? AND (SELECT yes FROM many) RETURNING delta
)
INSERT INTO easyjob_task_totals (group_name, delta)
SELECT ?, sum(delta) FROM gone HAVING count(*) > 0`, foldTotalsAfter, group, foldTotalsAfter, group, group)
}

// TaskPage lists one page of the matching tasks of group from the query's
// cursor, in byte order of names (easyjob_tasks_name_bytes_idx), with the
// number of matches up to repository.TaskCountLimit and whether matches
// lie on either side: one statement whose cost follows the page and the
// capped count, not the group.
func (s *Store) TaskPage(ctx context.Context, group string, q repository.TaskQuery) (repository.TaskPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	match, args := taskMatch(group, q)
	// page: limit+1 rows in the direction of travel (the extra one says
	// whether there is more); behind: whether matches lie the other way.
	order, cursor, behind := `ASC`, ``, `false`
	var pageArgs, behindArgs []any
	switch {
	case q.After != "":
		cursor, behind = ` AND t.name COLLATE "C" > ?`, `EXISTS (SELECT 1 FROM easyjob_tasks t WHERE `+match+` AND t.name COLLATE "C" <= ?)`
		pageArgs, behindArgs = []any{q.After}, append(slices.Clone(args), q.After)
	case q.Before != "":
		order = `DESC`
		cursor, behind = ` AND t.name COLLATE "C" < ?`, `EXISTS (SELECT 1 FROM easyjob_tasks t WHERE `+match+` AND t.name COLLATE "C" >= ?)`
		pageArgs, behindArgs = []any{q.Before}, append(slices.Clone(args), q.Before)
	}
	stmt := `WITH ` + liveSets + `,
page AS (
  SELECT t.id, t.name FROM easyjob_tasks t WHERE ` + match + cursor + `
  ORDER BY t.name COLLATE "C" ` + order + ` LIMIT ?::bigint
),
meta AS (
  SELECT (SELECT count(*) FROM (SELECT 1 FROM easyjob_tasks t WHERE ` + match + ` LIMIT ?::bigint) c) AS total,
    ` + behind + ` AS behind
)
SELECT meta.total, meta.behind, p.name, ` + staleExpr + `, ` + taskCols("t") + `
FROM meta LEFT JOIN page ON true LEFT JOIN easyjob_tasks t ON t.id = page.id
LEFT JOIN easyjob_tasks p ON p.id = t.parent_id
ORDER BY t.name COLLATE "C"`
	all := []any{group, micros(q.LiveWithin)}
	all = append(append(append(all, args...), pageArgs...), limit+1)
	all = append(append(all, args...), repository.TaskCountLimit+1)
	all = append(all, behindArgs...)
	rows, err := s.db.QueryContext(ctx, stmt, all...)
	if err != nil {
		return repository.TaskPage{}, fmt.Errorf("easyjob/postgres: task page of %q: %w", group, err)
	}
	page, err := scanTaskPage(rows)
	if err != nil {
		return repository.TaskPage{}, fmt.Errorf("easyjob/postgres: task page of %q: %w", group, err)
	}
	page.TotalCapped = page.Total > repository.TaskCountLimit
	page.Total = min(page.Total, repository.TaskCountLimit)
	more := len(page.Rows) > limit
	if q.After == "" && q.Before != "" { // read backwards: the extra row is the first
		if more {
			page.Rows = page.Rows[1:]
		}
		page.HasPrev = more // HasNext holds behind already
	} else {
		if more {
			page.Rows = page.Rows[:limit]
		}
		page.HasPrev, page.HasNext = page.HasNext, more
	}
	return page, nil
}

// taskMatch is the condition on t of the tasks of group matching q's
// filters (not its cursor), with its arguments.
func taskMatch(group string, q repository.TaskQuery) (string, []any) {
	conds, args := []string{`t.group_name = ?`, `t.status <> 'removed'`}, []any{group}
	if q.Search != "" {
		conds, args = append(conds, `strpos(lower(t.name), lower(?::text)) > 0`), append(args, q.Search)
	}
	if q.Status != "" {
		conds, args = append(conds, `t.status = ?::text`), append(args, string(q.Status))
	}
	if q.Paused {
		conds = append(conds, `t.paused`)
	}
	if q.Failing {
		conds = append(conds, failingExpr)
	}
	if q.Stale {
		conds = append(conds, staleExpr)
	}
	return strings.Join(conds, ` AND `), args
}

// scanTaskPage reads rows of (total, behind, parent name, stale, task
// columns) and closes rows; HasNext carries behind for the caller to
// place.
func scanTaskPage(rows *sql.Rows) (repository.TaskPage, error) {
	defer rows.Close()
	var page repository.TaskPage
	for rows.Next() {
		var parent sql.NullString
		var stale sql.NullBool
		var r taskScan
		if err := rows.Scan(append([]any{&page.Total, &page.HasNext, &parent, &stale}, r.dest()...)...); err != nil {
			return page, err
		}
		t, ok, err := r.task()
		if err != nil {
			return page, err
		}
		if ok {
			page.Rows = append(page.Rows, repository.TaskRow{Task: t, Parent: parent.String, Stale: stale.Bool})
		}
	}
	return page, rows.Err()
}

// TaskTree lists the chain of task name: its root and every descendant of
// the root, ordered by id.
func (s *Store) TaskTree(ctx context.Context, group, name string, liveWithin time.Duration) ([]repository.TaskRow, error) {
	q := `WITH RECURSIVE ` + liveSets + `,
up AS (
  SELECT t.id, t.parent_id FROM easyjob_tasks t
  WHERE t.group_name = ? AND t.name = ? AND t.status <> 'removed'
  UNION
  SELECT p.id, p.parent_id FROM easyjob_tasks p JOIN up ON p.id = up.parent_id
),
down AS (
  SELECT id FROM up WHERE parent_id IS NULL
  UNION
  SELECT c.id FROM easyjob_tasks c JOIN down ON c.parent_id = down.id WHERE c.status <> 'removed'
)
SELECT p.name, ` + staleExpr + `, 0, ` + taskCols("t") + `
FROM easyjob_tasks t JOIN down ON down.id = t.id
LEFT JOIN easyjob_tasks p ON p.id = t.parent_id
ORDER BY t.id`
	rows, err := s.db.QueryContext(ctx, q, group, micros(liveWithin), group, name)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: chain of %q: %w", name, err)
	}
	var total int
	out, err := scanTaskRows(rows, &total)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: chain of %q: %w", name, err)
	}
	if len(out) == 0 {
		return nil, notFound(group, name)
	}
	return out, nil
}

// scanTaskRows reads rows of (parent name, stale, a count, task columns)
// and closes rows; total receives the count of the last row.
func scanTaskRows(rows *sql.Rows, total *int) ([]repository.TaskRow, error) {
	defer rows.Close()
	var out []repository.TaskRow
	for rows.Next() {
		var parent sql.NullString
		var stale bool
		var r taskScan
		if err := rows.Scan(append([]any{&parent, &stale, total}, r.dest()...)...); err != nil {
			return nil, err
		}
		t, ok, err := r.task()
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, repository.TaskRow{Task: t, Parent: parent.String, Stale: stale})
		}
	}
	return out, rows.Err()
}

// TaskRuns is History of the task with that id, its filters written as
// conditions with the id as a literal: the planner then sees the task's
// own row count (a task with half the history walks its index newest
// first rather than sorting all its runs) and the partial indexes of rare
// statuses.
func (s *Store) TaskRuns(ctx context.Context, group string, task repository.TaskID, f repository.HistoryFilter) ([]repository.Execution, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	conds, args := []string{"e.task_id = " + strconv.FormatInt(int64(task), 10), "t.group_name = ?"}, []any{group}
	if f.Status != "" {
		conds, args = append(conds, "e.status = ?"), append(args, string(f.Status))
	}
	if !f.Since.IsZero() {
		conds, args = append(conds, "e.started_at >= ?::timestamptz"), append(args, f.Since)
	}
	if !f.Fire.IsZero() {
		conds, args = append(conds, "e.scheduled_at = ?::timestamptz"), append(args, f.Fire)
	}
	if f.BeforeID != 0 {
		conds, args = append(conds, "e.id < ?::bigint"), append(args, f.BeforeID)
	}
	q := `SELECT t.name, ` + execCols("e") + `
FROM easyjob_executions e JOIN easyjob_tasks t ON t.id = e.task_id
WHERE ` + strings.Join(conds, " AND ") + `
ORDER BY e.id DESC
LIMIT ?::bigint`
	out, err := scanNamedExecs(s.db.QueryContext(ctx, q, append(args, limit)...))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: runs of task %d: %w", task, err)
	}
	return out, nil
}

// RecentExecutions lists the executions of group's tasks started at or
// after since, newest first (index easyjob_executions_started_idx).
func (s *Store) RecentExecutions(ctx context.Context, group string, since time.Time, limit int) ([]repository.Execution, error) {
	if limit <= 0 {
		limit = 100
	}
	q := `SELECT t.name, ` + execCols("e") + `
FROM easyjob_executions e JOIN easyjob_tasks t ON t.id = e.task_id
WHERE e.started_at >= ?::timestamptz AND t.group_name = ?
ORDER BY e.started_at DESC, e.id DESC
LIMIT ?::bigint`
	out, err := scanNamedExecs(s.db.QueryContext(ctx, q, since, group, limit))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: recent executions of %q: %w", group, err)
	}
	return out, nil
}

// scanNamedExecs reads rows of (task name, execution columns) and closes
// rows.
func scanNamedExecs(rows *sql.Rows, err error) ([]repository.Execution, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []repository.Execution
	for rows.Next() {
		var name string
		var r execScan
		if err := rows.Scan(append([]any{&name}, r.dest()...)...); err != nil {
			return nil, err
		}
		if e, ok := r.execution(); ok {
			e.TaskName = name
			out = append(out, e)
		}
	}
	return out, rows.Err()
}

// CountFailures counts the failed, timed out, abandoned and fenced
// executions of group started at or after since (index
// easyjob_executions_failures_idx).
func (s *Store) CountFailures(ctx context.Context, group string, since time.Time) (map[repository.ExecStatus]int, error) {
	q := `SELECT e.status, count(*)
FROM easyjob_executions e JOIN easyjob_tasks t ON t.id = e.task_id
WHERE e.status IN ('failed', 'timed_out', 'abandoned', 'fenced')
  AND e.started_at >= ?::timestamptz AND t.group_name = ?
GROUP BY e.status`
	rows, err := s.db.QueryContext(ctx, q, since, group)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: failures of %q: %w", group, err)
	}
	defer rows.Close()
	out := map[repository.ExecStatus]int{}
	for rows.Next() {
		var st repository.ExecStatus
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: failures of %q: %w", group, err)
		}
		out[st] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: failures of %q: %w", group, err)
	}
	return out, nil
}
