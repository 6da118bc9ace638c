package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// StartExecution inserts a running execution if the claim still holds, in
// one INSERT ... SELECT ... WHERE EXISTS(fence). The fence row is not
// locked: a row lock here queues behind every claim and finish batch that
// touches the row and costs a multixact write. If a recovery commits
// between the check and this insert, the execution stays running until the
// zombie's fenced finish closes it as fenced.
func (s *Store) StartExecution(ctx context.Context, c repository.Claim, e repository.Execution) (repository.Execution, error) {
	q := `INSERT INTO easyjob_executions AS x
  (task_id, parent_execution_id, node_id, scheduled_at, attempt, misfire, status, started_at)
SELECT ?::bigint, ?::bigint, ?::bigint, ?::timestamptz, greatest(?::int, 1), ?::text, 'running', now()
WHERE EXISTS (
  SELECT 1 FROM easyjob_tasks t
  WHERE t.id = ?::bigint AND t.version = ?::bigint AND t.node_id = ?::bigint AND t.status = 'doing'
)
ON CONFLICT (task_id, node_id, scheduled_at, attempt)
  DO UPDATE SET status = 'running', finished_at = NULL, error = ''
RETURNING ` + execCols("x")
	var parent any
	if e.ParentExecutionID != 0 {
		parent = e.ParentExecutionID
	}
	scheduled := e.ScheduledAt
	if scheduled.IsZero() {
		scheduled = time.Unix(0, 0) // the column is NOT NULL; callers always set it
	}
	rows, err := s.db.QueryContext(ctx, q,
		int64(c.ID), parent, int64(c.NodeID), scheduled, e.Attempt, string(e.Misfire),
		int64(c.ID), c.Version, int64(c.NodeID))
	if err != nil {
		return repository.Execution{}, fmt.Errorf("easyjob/postgres: start execution of task %d: %w", c.ID, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return repository.Execution{}, fmt.Errorf("easyjob/postgres: start execution of task %d: %w", c.ID, err)
		}
		return repository.Execution{}, claimLost(c)
	}
	var r execScan
	if err := rows.Scan(r.dest()...); err != nil {
		return repository.Execution{}, fmt.Errorf("easyjob/postgres: start execution of task %d: %w", c.ID, err)
	}
	out, _ := r.execution()
	return out, rows.Err()
}

// claimLost names the claim in an error wrapping ErrClaimLost.
func claimLost(c repository.Claim) error {
	return fmt.Errorf("easyjob/postgres: task %d at version %d held by node %d: %w",
		c.ID, c.Version, c.NodeID, repository.ErrClaimLost)
}

// History lists the executions of a task newest first. The task is looked
// up in the same statement (executions left-joined laterally), so an
// unknown name is told apart from an empty history in one round trip.
func (s *Store) History(ctx context.Context, group, name string, f repository.HistoryFilter) ([]repository.Execution, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q := `SELECT t.name, ` + execCols("x") + `
FROM easyjob_tasks t
LEFT JOIN LATERAL (
  SELECT * FROM easyjob_executions e
  WHERE e.task_id = t.id
    AND (?::text = '' OR e.status = ?::text)
    AND (?::timestamptz IS NULL OR e.started_at >= ?::timestamptz)
    AND (?::bigint = 0 OR e.id < ?::bigint)
  ORDER BY e.id DESC
  LIMIT ?::bigint
) x ON true
WHERE t.group_name = ? AND t.name = ?
ORDER BY x.id DESC`
	since := nullTime(f.Since)
	rows, err := s.db.QueryContext(ctx, q,
		string(f.Status), string(f.Status), since, since, f.BeforeID, f.BeforeID, limit, group, name)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: history of %q: %w", name, err)
	}
	defer rows.Close()
	found := false
	var out []repository.Execution
	for rows.Next() {
		found = true
		var taskName string
		var r execScan
		if err := rows.Scan(append([]any{&taskName}, r.dest()...)...); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: history of %q: %w", name, err)
		}
		if e, ok := r.execution(); ok {
			e.TaskName = taskName
			out = append(out, e)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: history of %q: %w", name, err)
	}
	if !found {
		return nil, notFound(group, name)
	}
	return out, nil
}

// pruneBatch bounds each DELETE so retention never holds long locks or
// builds a huge transaction on a table the workers write to.
const pruneBatch = 1000

// PruneHistory deletes finished executions of group older than maxAge or
// beyond the newest maxRows of their task, pruneBatch rows per statement.
// The per-task ranking (a window over the group's history) is computed
// only when maxRows asks for it; age alone is a plain indexed filter.
func (s *Store) PruneHistory(ctx context.Context, group string, maxAge time.Duration, maxRows int) (int, error) {
	if maxAge <= 0 && maxRows <= 0 {
		return 0, nil
	}
	rank := "0"
	if maxRows > 0 {
		rank = "row_number() OVER (PARTITION BY x.task_id ORDER BY x.id DESC)"
	}
	q := `DELETE FROM easyjob_executions WHERE id IN (
  SELECT r.id FROM (
    SELECT x.id, x.status, x.started_at, ` + rank + ` AS rn
    FROM easyjob_executions x JOIN easyjob_tasks t ON t.id = x.task_id
    WHERE t.group_name = ?
  ) r
  WHERE r.status <> 'running' AND (
    (?::bigint > 0 AND r.started_at < now() - (?::bigint * interval '1 microsecond'))
    OR (?::bigint > 0 AND r.rn > ?::bigint)
  )
  LIMIT ` + fmt.Sprint(pruneBatch) + `
)`
	age := micros(max(maxAge, 0))
	total := 0
	for {
		res, err := s.db.ExecContext(ctx, q, group, age, age, maxRows, maxRows)
		if err != nil {
			return total, fmt.Errorf("easyjob/postgres: prune history of %q: %w", group, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("easyjob/postgres: prune history of %q: %w", group, err)
		}
		total += int(n)
		if n < pruneBatch {
			return total, s.dropEmptyTombstones(ctx, group)
		}
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("easyjob/postgres: prune history of %q: %w", group, err)
		}
	}
}

// dropEmptyTombstones deletes the removed tasks of group whose history is
// gone: they were kept only for it.
func (s *Store) dropEmptyTombstones(ctx context.Context, group string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM easyjob_tasks t
WHERE t.group_name = ? AND t.status = 'removed'
  AND NOT EXISTS (SELECT 1 FROM easyjob_executions e WHERE e.task_id = t.id)`, group)
	if err != nil {
		return fmt.Errorf("easyjob/postgres: prune removed tasks of %q: %w", group, err)
	}
	return nil
}
