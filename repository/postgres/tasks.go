package postgres

import (
	"context"
	"fmt"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// DueTasks lists the pending root tasks whose handler is among q.Handlers
// (a registered task's own name, a runtime schedule's kind) due within
// q.Window and
// returns the database's now with them. The clock is read in the same
// statement (a left join of a one-row clock), so an empty answer still
// costs one round trip and the caller's clock-offset estimate stays fresh.
// It reads due_at, which equals next_start_time on every pending row and
// is the only one of the two indexed (migration 0008: a kept claim's
// update stays HOT).
func (s *Store) DueTasks(ctx context.Context, q repository.DueQuery) (repository.Due, error) {
	limit := "ALL"
	args := []any{q.Group, pgdialect.Array(nonNil(q.Handlers)), micros(q.Window)}
	if q.Limit > 0 {
		limit = "?::bigint"
		args = append(args, q.Limit)
	}
	sqlText := `SELECT c.now, ` + taskCols("t") + `
FROM (SELECT now() AS now) c
LEFT JOIN LATERAL (
  SELECT * FROM easyjob_tasks d
  WHERE d.group_name = ? AND d.status = 'pending' AND d.parent_id IS NULL
    AND d.handler = ANY(?::text[])
    AND d.due_at <= c.now + (?::bigint * interval '1 microsecond')
  ORDER BY d.due_at, d.id
  LIMIT ` + limit + `
) t ON true`
	rows, err := s.db.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return repository.Due{}, fmt.Errorf("easyjob/postgres: due tasks of %q: %w", q.Group, err)
	}
	defer rows.Close()
	var due repository.Due
	// One scan buffer and one options memo for every row, as scanTasks:
	// a pass of a burst's schedules reads thousands of rows sharing a few
	// option sets.
	var r taskScan
	var memo optionsMemo
	dest := append([]any{&due.Now}, r.dest()...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return repository.Due{}, fmt.Errorf("easyjob/postgres: due tasks of %q: %w", q.Group, err)
		}
		t, ok, err := r.taskWith(&memo)
		if err != nil {
			return repository.Due{}, err
		}
		if ok {
			due.Tasks = append(due.Tasks, t)
		}
	}
	if err := rows.Err(); err != nil {
		return repository.Due{}, fmt.Errorf("easyjob/postgres: due tasks of %q: %w", q.Group, err)
	}
	due.Now = due.Now.UTC()
	return due, nil
}

// Claim moves every (id, version) still pending at that version to doing
// for node, in one statement. Rows whose version moved (a peer won) do not
// match, so only the returned rows are won.
//
// The rows are locked in id order first (the FOR NO KEY UPDATE subquery): two
// claimers racing for overlapping batches would otherwise lock rows in
// their join's order and deadlock. A loser waits for the winner's commit,
// then re-reads the row, sees the new version and skips it. SKIP LOCKED
// would avoid the wait but could skip a row that another statement (a
// pause, a registration) merely locked, and the contract says a pending
// row at the given version is claimed.
func (s *Store) Claim(ctx context.Context, node repository.NodeID, refs []repository.TaskRef) ([]repository.Task, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	ids, versions := make([]int64, len(refs)), make([]int64, len(refs))
	for i, r := range refs {
		ids[i], versions[i] = int64(r.ID), r.Version
	}
	args := []any{int64(node), pgdialect.Array(ids), pgdialect.Array(versions), pgdialect.Array(ids)}
	// The pending test is a CASE for the reason given at fenceHolds.
	q := `UPDATE easyjob_tasks t
SET status = 'doing', node_id = ?::bigint, version = t.version + 1, updated_at = now(), held_fire = NULL
FROM (
  SELECT c.id FROM easyjob_tasks c
  JOIN unnest(?::bigint[], ?::bigint[]) AS v(id, version) ON c.id = v.id
  WHERE c.id = ANY(?::bigint[])
    AND CASE WHEN c.status = 'pending' AND c.version = v.version THEN true ELSE false END
  ORDER BY c.id
  FOR NO KEY UPDATE OF c
) l
WHERE t.id = l.id
RETURNING ` + taskCols("t")
	tasks, err := scanTasks(s.db.QueryContext(ctx, q, args...))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: claim %d tasks for node %d: %w", len(refs), node, err)
	}
	sortTasks(tasks)
	return tasks, nil
}

// Release hands claims back (pending, node cleared, version+1) where the
// fence still holds (rows locked in id order, as in Claim), and wakes the groups' loaders in the same statement
// so a peer can take the work at once.
func (s *Store) Release(ctx context.Context, claims []repository.Claim) (int, error) {
	if len(claims) == 0 {
		return 0, nil
	}
	ids, versions, nodes := claimArrays(claims)
	args := []any{pgdialect.Array(ids), pgdialect.Array(versions), pgdialect.Array(nodes), pgdialect.Array(ids)}
	q := `WITH v AS (SELECT * FROM unnest(?::bigint[], ?::bigint[], ?::bigint[]) AS v(id, version, node_id)),
l AS (` + lockFenced + `),
r AS (
  UPDATE easyjob_tasks t
  SET status = 'pending', node_id = NULL, version = t.version + 1, updated_at = now()
  FROM l
  WHERE t.id = l.id
  RETURNING t.group_name
),
n AS (SELECT pg_notify('` + notifyChannel + `', g.group_name) FROM (SELECT DISTINCT group_name FROM r) g)
SELECT (SELECT count(*) FROM r), (SELECT count(*) FROM n)`
	var released, notified int
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(&released, &notified); err != nil {
		return 0, fmt.Errorf("easyjob/postgres: release %d claims: %w", len(claims), err)
	}
	return released, nil
}

// HeldBy lists the doing tasks claimed by node, for reconciliation.
func (s *Store) HeldBy(ctx context.Context, node repository.NodeID) ([]repository.Task, error) {
	q := `SELECT ` + taskCols("t") + ` FROM easyjob_tasks t
WHERE t.node_id = ?::bigint AND t.status = 'doing' ORDER BY t.id`
	tasks, err := scanTasks(s.db.QueryContext(ctx, q, int64(node)))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: tasks held by node %d: %w", node, err)
	}
	return tasks, nil
}

// Task reads one task by name (not a removed one).
func (s *Store) Task(ctx context.Context, group, name string) (repository.Task, error) {
	q := `SELECT ` + taskCols("t") + ` FROM easyjob_tasks t WHERE t.group_name = ? AND t.name = ? AND t.status <> 'removed'`
	tasks, err := scanTasks(s.db.QueryContext(ctx, q, group, name))
	if err != nil {
		return repository.Task{}, fmt.Errorf("easyjob/postgres: task %q in group %q: %w", name, group, err)
	}
	return oneTask(tasks, group, name)
}

// RegisteredTasks lists the tasks of group registered in code, ordered by
// id (index easyjob_tasks_registered_idx: runtime schedules are not read).
func (s *Store) RegisteredTasks(ctx context.Context, group string) ([]repository.Task, error) {
	q := `SELECT ` + taskCols("t") + ` FROM easyjob_tasks t
WHERE t.group_name = ? AND NOT t.dynamic AND t.status <> 'removed' ORDER BY t.id`
	tasks, err := scanTasks(s.db.QueryContext(ctx, q, group))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: registered tasks of %q: %w", group, err)
	}
	return tasks, nil
}

// Tasks lists every task of group ordered by id, removed ones left out.
func (s *Store) Tasks(ctx context.Context, group string) ([]repository.Task, error) {
	q := `SELECT ` + taskCols("t") + ` FROM easyjob_tasks t WHERE t.group_name = ? AND t.status <> 'removed' ORDER BY t.id`
	tasks, err := scanTasks(s.db.QueryContext(ctx, q, group))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: tasks of %q: %w", group, err)
	}
	return tasks, nil
}
