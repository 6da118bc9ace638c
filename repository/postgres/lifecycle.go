package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// MarkStale sets stale_since on the tasks of group named in stale (kept
// when set) and clears it on the others, without a version change, and
// returns every task of the group. A runtime schedule (dynamic) is never
// marked: no node registers it by name. The rows to change are locked in
// id order first, as every batch write does.
func (s *Store) MarkStale(ctx context.Context, group string, stale []string) ([]repository.Task, error) {
	names := pgdialect.Array(nonNil(stale))
	q := `WITH l AS (
  SELECT c.id FROM easyjob_tasks c
  WHERE c.group_name = ? AND NOT c.dynamic AND c.status <> 'removed' AND (c.stale_since IS NULL) = (c.name = ANY(?::text[]))
  ORDER BY c.id
  FOR NO KEY UPDATE OF c
),
u AS (
  UPDATE easyjob_tasks t SET stale_since = CASE WHEN t.name = ANY(?::text[]) THEN now() END
  FROM l WHERE t.id = l.id
  RETURNING ` + taskCols("t") + `
)
SELECT ` + taskCols("u") + ` FROM u
UNION ALL
SELECT ` + taskCols("t") + ` FROM easyjob_tasks t
WHERE t.group_name = ? AND NOT t.dynamic AND t.status <> 'removed' AND t.id NOT IN (SELECT id FROM u)
ORDER BY 1`
	tasks, err := scanTasks(s.db.QueryContext(ctx, q, group, names, names, group))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: mark stale tasks of %q: %w", group, err)
	}
	return tasks, nil
}

// Groups lists the groups with tasks (not removed) or nodes.
func (s *Store) Groups(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT group_name FROM easyjob_tasks WHERE status <> 'removed'
UNION SELECT group_name FROM easyjob_nodes ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: list groups: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: list groups: %w", err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: list groups: %w", err)
	}
	return out, nil
}

// RemoveTask removes the task and its descendants in one transaction,
// serialised with UpsertTasks of the group (the same advisory lock), so a
// registration is either seen before (it cleared stale_since) or comes
// after (it inserts the name anew).
func (s *Store) RemoveTask(ctx context.Context, group, name string, o repository.Removal) ([]repository.Task, error) {
	var out []repository.Task
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = removeTx(ctx, tx, group, name, o)
		return err
	})
	if err != nil && !errors.Is(err, repository.ErrTaskNotFound) {
		return nil, fmt.Errorf("easyjob/postgres: remove %q from group %q: %w", name, group, err)
	}
	return out, err
}

// subtreeSQL selects the task named by its two arguments (group, name)
// and its descendants, by id, following easyjob_tasks_parent_idx from the
// root down: the rows of the subtree only, however many the group has.
var subtreeSQL = `WITH RECURSIVE sub(id) AS (
  SELECT id FROM easyjob_tasks WHERE group_name = ? AND name = ? AND status <> 'removed'
  UNION
  SELECT c.id FROM easyjob_tasks c JOIN sub ON c.parent_id = sub.id WHERE c.status <> 'removed'
)
SELECT ` + taskCols("t") + ` FROM easyjob_tasks t WHERE t.id IN (SELECT id FROM sub) ORDER BY t.id`

func removeTx(ctx context.Context, tx bun.Tx, group, name string, o repository.Removal) ([]repository.Task, error) {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?::int, hashtext(?))`, upsertLockClass, group); err != nil {
		return nil, err
	}
	// The subtree's rows only: locking the group's (a million runtime
	// schedules) would stall every claim and finish of the group. The
	// advisory lock keeps UpsertTasks from adding a child meanwhile.
	stored, err := scanTasks(tx.QueryContext(ctx, subtreeSQL+` FOR NO KEY UPDATE OF t`, group, name))
	if err != nil {
		return nil, err
	}
	subtree, err := repository.Subtree(stored, name, o.StaleBefore)
	if err != nil {
		return nil, notFound(group, name)
	}
	if len(subtree) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(subtree))
	for i, t := range subtree {
		ids[i] = int64(t.ID)
	}
	var kept []repository.Task
	if o.KeepHistory {
		kept, err = scanTasks(tx.QueryContext(ctx, `UPDATE easyjob_tasks t SET
  status = 'removed', node_id = NULL, version = t.version + 1, paused = false,
  trigger_requested = false, stale_since = NULL, updated_at = now()
WHERE t.id = ANY(?::bigint[]) AND EXISTS (SELECT 1 FROM easyjob_executions e WHERE e.task_id = t.id)
RETURNING `+taskCols("t"), pgdialect.Array(ids)))
		if err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM easyjob_tasks WHERE id = ANY(?::bigint[]) AND status <> 'removed'`,
		pgdialect.Array(ids)); err != nil {
		return nil, err
	}
	for i, t := range subtree {
		if j := slices.IndexFunc(kept, func(k repository.Task) bool { return k.ID == t.ID }); j >= 0 {
			subtree[i] = kept[j]
		}
	}
	if e, ok := repository.AuditFrom(ctx); ok {
		// In the removal's transaction: recorded exactly when it happened.
		if _, err := tx.ExecContext(ctx, `INSERT INTO easyjob_audit (group_name, task, actor, via, origin, action, detail)
VALUES (?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text)`,
			append([]any{group, name}, auditArgs(e)...)...); err != nil {
			return nil, err
		}
	}
	return subtree, nil
}
