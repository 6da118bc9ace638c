package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// Orphans lists doing tasks of group whose claimer has not heartbeated
// within deadAfter, by the database clock, or whose node row is gone
// (the original easy-job never found the latter).
func (s *Store) Orphans(ctx context.Context, group string, deadAfter time.Duration) ([]repository.Orphan, error) {
	q := `SELECT ` + taskCols("t") + ` FROM easyjob_tasks t
LEFT JOIN easyjob_nodes n ON n.id = t.node_id
WHERE t.group_name = ? AND t.status = 'doing'
  AND (n.id IS NULL OR n.heartbeat_at < now() - (?::bigint * interval '1 microsecond'))
ORDER BY t.id`
	tasks, err := scanTasks(s.db.QueryContext(ctx, q, group, micros(deadAfter)))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: orphans of %q: %w", group, err)
	}
	out := make([]repository.Orphan, len(tasks))
	for i, t := range tasks {
		out[i] = repository.Orphan{Task: t, DeadNode: t.NodeID}
	}
	return out, nil
}

// recoverSQL resets a batch of orphans in one statement, each row reached
// by primary key (the id array), the batch sent as one array per column:
// the version-checked reset of each task (rows locked in id order, like
// every batch write), the abandonment of the dead node's running
// executions of the tasks reset (x reads u), an abandoned row for a fire
// that came due while the dead node still heartbeated and has no row of
// that node (a short run is recorded only at its finish), one wake-up of
// the group, and per request whether it applied.
//
// A StartExecution of the same claim racing this statement (a zombie node
// resuming at that instant) may insert an execution this statement's
// snapshot cannot see; it stays running until the zombie's finish, which
// is fenced, closes it as fenced (TestStartExecutionRacingRecover).
const recoverSQL = `WITH v AS (
  SELECT * FROM unnest(?::int[], ?::bigint[], ?::bigint[], ?::bigint[], ?::timestamptz[], ?::text[], ?::bigint[])
    AS v(ord, id, version, node_id, next, err, delay_us)
),
l AS (
  SELECT v.*, f.fire, f.attempt, f.batch,
    f.fire + v.delay_us * interval '1 microsecond' <= hb.heartbeat_at AS due_alive
  FROM easyjob_tasks c JOIN v ON c.id = v.id
  CROSS JOIN LATERAL (SELECT
    CASE WHEN ` + runsBackfill + ` THEN c.backfill_next ELSE c.next_start_time END AS fire,
    CASE WHEN ` + runsBackfill + ` THEN 1 ELSE c.attempt END AS attempt,
    CASE WHEN ` + runsBackfill + ` THEN (extract(epoch FROM c.backfill_at) * 1000000)::bigint ELSE 0 END AS batch) f
  LEFT JOIN easyjob_nodes hb ON hb.id = v.node_id
  WHERE c.id = ANY(?::bigint[]) AND ` + fenceHolds + `
  ORDER BY c.id FOR NO KEY UPDATE OF c
),
u AS (
  UPDATE easyjob_tasks t
  SET status = 'pending', node_id = NULL, version = t.version + 1, updated_at = now(),
      next_start_time = coalesce(l.next, t.next_start_time),
      last_status = CASE WHEN l.due_alive OR EXISTS (SELECT 1 FROM easyjob_executions r
        WHERE r.task_id = t.id AND r.node_id = l.node_id AND r.status = 'running') THEN 'abandoned' ELSE t.last_status END,
      last_error = CASE WHEN l.due_alive OR EXISTS (SELECT 1 FROM easyjob_executions r
        WHERE r.task_id = t.id AND r.node_id = l.node_id AND r.status = 'running') THEN l.err ELSE t.last_error END
  FROM l
  WHERE t.id = l.id
  RETURNING l.ord, t.id, t.group_name, l.node_id AS dead, l.err, l.fire, l.attempt, l.batch, l.due_alive,
    CASE WHEN t.parent_id IS NOT NULL THEN 'chain' WHEN l.batch <> 0 THEN 'backfill' WHEN t.fire_kind <> '' AND l.attempt <= 1 THEN t.fire_kind
      WHEN l.attempt > 1 THEN 'retry' ELSE 'cron' END AS kind
),
x AS (
  UPDATE easyjob_executions e
  SET status = 'abandoned', finished_at = now(), error = u.err
  FROM u
  WHERE e.task_id = u.id AND e.node_id = u.dead AND e.status = 'running'
  RETURNING e.id
),
a AS (
  INSERT INTO easyjob_executions (task_id, node_id, scheduled_at, attempt, batch, kind, status, started_at, finished_at, error)
  SELECT u.id, u.dead, u.fire, greatest(u.attempt, 1), u.batch, u.kind, 'abandoned', now(), now(), u.err FROM u WHERE u.due_alive
  ON CONFLICT (task_id, node_id, scheduled_at, attempt, batch) WHERE status <> 'fenced' DO NOTHING
  RETURNING id
),
n AS (SELECT pg_notify('` + notifyChannel + `', g.name) FROM (SELECT DISTINCT group_name AS name FROM u) g)
SELECT u.ord, (SELECT count(*) FROM n) FROM u`

// runsBackfill is repository.Task.RunsBackfill of row c: the fire a
// claim of it ran was its backfill's (recovery records that one).
const runsBackfill = `(c.backfill_next IS NOT NULL AND c.fire_kind <> 'manual')`

// RecoverAll resets many orphans in one statement.
func (s *Store) RecoverAll(ctx context.Context, rs []repository.Recovery) ([]error, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	var (
		ord               []int32
		id, version, node []int64
		next              []*time.Time
		msg               []string
		delay             []int64
	)
	for i, r := range rs {
		ord = append(ord, int32(i))
		id = append(id, int64(r.Ref.ID))
		version = append(version, r.Ref.Version)
		node = append(node, int64(r.DeadNode))
		next = append(next, nullTimePtr(r.Next))
		msg = append(msg, fmt.Sprintf("node %d died", r.DeadNode))
		delay = append(delay, r.Delay.Microseconds())
	}
	args := []any{
		pgdialect.Array(ord), pgdialect.Array(id), pgdialect.Array(version), pgdialect.Array(node),
		pgdialect.Array(next), pgdialect.Array(msg), pgdialect.Array(delay), pgdialect.Array(id),
	}
	res, err := s.db.QueryContext(ctx, recoverSQL, args...)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: recover %d tasks: %w", len(rs), err)
	}
	defer res.Close()
	errs := make([]error, len(rs))
	for i, r := range rs {
		errs[i] = claimLost(repository.Claim{ID: r.Ref.ID, Version: r.Ref.Version, NodeID: r.DeadNode}) // unless it comes back
	}
	for res.Next() {
		var ord, notified int
		if err := res.Scan(&ord, &notified); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: recover: %w", err)
		}
		if ord < 0 || ord >= len(rs) {
			return nil, fmt.Errorf("easyjob/postgres: recover: bad result row %d", ord)
		}
		errs[ord] = nil
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: recover: %w", err)
	}
	return errs, nil
}
