package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// StartExecution inserts a running execution if the claim still holds, in
// one INSERT ... SELECT ... WHERE EXISTS(fence). The fence row is not
// locked: a row lock here queues behind every claim and finish batch that
// touches the row and costs a multixact write. If a recovery commits
// between the check and this insert, the execution stays running until the
// zombie's fenced finish closes it as fenced.
func (s *Store) StartExecution(ctx context.Context, c repository.Claim, e repository.Execution) (repository.Execution, error) {
	if err := repository.CheckArgs(fmt.Sprintf("start execution of task %d", c.ID), e.Args); err != nil {
		return repository.Execution{}, err
	}
	q := `INSERT INTO easyjob_executions AS x
  (task_id, parent_execution_id, node_id, scheduled_at, attempt, misfire, kind, args, revision, batch, status, started_at)
SELECT ?::bigint, ?::bigint, ?::bigint, ?::timestamptz, greatest(?::int, 1), ?::text, ?::text,
  nullif(?::text, '')::jsonb, ?::bigint, ?::bigint, 'running', now()
WHERE EXISTS (
  SELECT 1 FROM easyjob_tasks t
  WHERE t.id = ?::bigint AND t.version = ?::bigint AND t.node_id = ?::bigint AND t.status = 'doing'
)
ON CONFLICT (task_id, node_id, scheduled_at, attempt, batch) WHERE status <> 'fenced'
  DO UPDATE SET
    status = CASE WHEN x.status IN ('running', 'abandoned') THEN 'running' ELSE x.status END,
    finished_at = CASE WHEN x.status IN ('running', 'abandoned') THEN NULL ELSE x.finished_at END,
    error = CASE WHEN x.status IN ('running', 'abandoned') THEN '' ELSE x.error END
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
		int64(c.ID), parent, int64(c.NodeID), scheduled, e.Attempt, string(e.Misfire), string(e.Kind), e.Args, e.Revision, e.Batch,
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
    AND (?::timestamptz IS NULL OR e.scheduled_at = ?::timestamptz)
    AND (?::bigint = 0 OR e.id < ?::bigint)
  ORDER BY e.id DESC
  LIMIT ?::bigint
) x ON true
WHERE t.group_name = ? AND t.name = ?
ORDER BY x.id DESC`
	since, fire := nullTime(f.Since), nullTime(f.Fire)
	rows, err := s.db.QueryContext(ctx, q,
		string(f.Status), string(f.Status), since, since, fire, fire, f.BeforeID, f.BeforeID, limit, group, name)
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
// Each batch reads about the rows it deletes, whatever the length of the
// history: by age it walks the started_at index from the oldest run; by
// rows it first finds, once, each task's newest run beyond maxRows (its
// cut, through the task index), then deletes at and below the cuts. A
// window over the group's history per batch made pruning slower than the
// history grows at thousands of fires a second.
func (s *Store) PruneHistory(ctx context.Context, group string, maxAge time.Duration, maxRows int) (int, error) {
	if maxAge <= 0 && maxRows <= 0 {
		return 0, nil
	}
	total := 0
	if maxAge > 0 {
		n, err := s.pruneOlder(ctx, group, maxAge)
		total += n
		if err != nil {
			return total, fmt.Errorf("easyjob/postgres: prune history of %q by age: %w", group, err)
		}
	}
	if maxRows > 0 {
		n, err := s.pruneBeyond(ctx, group, maxRows)
		total += n
		if err != nil {
			return total, fmt.Errorf("easyjob/postgres: prune history of %q by rows: %w", group, err)
		}
	}
	if err := s.dropEmptyTombstones(ctx, group); err != nil {
		return total, err
	}
	return total, nil
}

// pruneOlder deletes the finished runs of group's tasks started more than
// maxAge ago, oldest first, walking the started_at index: each batch
// starts where the last one ended, and the group is a filter on each run
// rather than a join the planner would drive from the group's tasks
// through every run they have. The filter is the list of the group's task
// ids (written as a CASE so that it stays one) while the group is small;
// for a larger one (a million runtime schedules would be megabytes sent
// with every batch) a scalar subquery on the task's primary key, which
// the planner keeps as a filter too, at about twice the cost per row.
func (s *Store) pruneOlder(ctx context.Context, group string, maxAge time.Duration) (int, error) {
	most := s.pruneIDs
	if most == 0 {
		most = maxPruneIDs
	}
	var ids []int64
	if err := s.db.NewSelect().Table("easyjob_tasks").Column("id").Where("group_name = ?", group).
		Limit(int64(max(most, 0)+1)).Scan(ctx, &ids); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	inGroup, arg := `CASE WHEN x.task_id = ANY(?::bigint[]) THEN true ELSE false END`, any(pgdialect.Array(ids))
	if len(ids) > most {
		inGroup, arg = `(SELECT t.group_name FROM easyjob_tasks t WHERE t.id = x.task_id) = ?`, group
	}
	q := `WITH d AS (
  DELETE FROM easyjob_executions WHERE id IN (
    SELECT x.id FROM easyjob_executions x
    WHERE x.started_at < now() - (?::bigint * interval '1 microsecond') AND x.started_at >= ?::timestamptz
      AND x.status <> 'running' AND ` + inGroup + `
    ORDER BY x.started_at
    LIMIT ` + fmt.Sprint(pruneBatch) + `
  )
  RETURNING started_at
)
SELECT count(*), max(started_at) FROM d`
	total, from := 0, time.Unix(0, 0)
	for {
		var n int
		var last sql.NullTime
		if err := s.db.QueryRowContext(ctx, q, micros(maxAge), from, arg).Scan(&n, &last); err != nil {
			return total, err
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
		from = last.Time
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// maxPruneIDs is the largest group whose task ids pruneOlder sends.
const maxPruneIDs = 10000

// pruneBeyond deletes the finished runs of group's tasks beyond the newest
// maxRows of each (running ones count among the newest, are never
// deleted).
func (s *Store) pruneBeyond(ctx context.Context, group string, maxRows int) (int, error) {
	var tasks, cuts []int64
	rows, err := s.db.QueryContext(ctx, `SELECT t.id, c.cut FROM easyjob_tasks t
CROSS JOIN LATERAL (
  SELECT x.id AS cut FROM easyjob_executions x WHERE x.task_id = t.id ORDER BY x.id DESC OFFSET ?::bigint LIMIT 1
) c
WHERE t.group_name = ?`, maxRows, group)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var task, cut int64
		if err := rows.Scan(&task, &cut); err != nil {
			return 0, err
		}
		tasks, cuts = append(tasks, task), append(cuts, cut)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(tasks) == 0 {
		return 0, nil
	}
	q := `DELETE FROM easyjob_executions WHERE id IN (
  SELECT x.id FROM unnest(?::bigint[], ?::bigint[]) AS k(task_id, cut)
  CROSS JOIN LATERAL (
    SELECT x.id FROM easyjob_executions x
    WHERE x.task_id = k.task_id AND x.id <= k.cut AND x.status <> 'running'
    ORDER BY x.task_id, x.id
    LIMIT ` + fmt.Sprint(pruneBatch) + `
  ) x
  LIMIT ` + fmt.Sprint(pruneBatch) + `
)`
	return s.pruneBatches(ctx, q, pgdialect.Array(tasks), pgdialect.Array(cuts))
}

// pruneBatches runs the batch DELETE q until it deletes fewer than
// pruneBatch rows, and returns how many it deleted.
func (s *Store) pruneBatches(ctx context.Context, q string, args ...any) (int, error) {
	total := 0
	for {
		res, err := s.db.ExecContext(ctx, q, args...)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += int(n)
		if n < pruneBatch {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
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
