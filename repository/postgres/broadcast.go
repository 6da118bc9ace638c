package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// startBroadcastSQL records one node's start of a fire of a broadcast
// task (repository.RunStore.StartBroadcast), in one statement:
//   - t reads the task row, only while it may fire: not paused, finished
//     or removed, and at the caller's revision;
//   - x inserts the running row at the start key, nothing when the node
//     has one for the fire already (no row lock on the task: every node
//     of the group starts each fire);
//   - u moves next_start_time on to the next fire when later, without a
//     version change (no claim depends on a broadcast row), only when x
//     wrote: the first node of each fire updates it, the others find it
//     moved and lock nothing.
const startBroadcastSQL = `WITH t AS (
  SELECT t.id, t.revision FROM easyjob_tasks t
  WHERE t.id = ?::bigint AND t.status IN ('pending', 'doing') AND NOT t.paused AND t.revision = ?::bigint
),
x AS (
  INSERT INTO easyjob_executions AS x (task_id, node_id, scheduled_at, attempt, batch, kind, revision, status, started_at)
  SELECT t.id, ?::bigint, ?::timestamptz, 1, 0, 'cron', t.revision, 'running', now() FROM t
  ON CONFLICT (task_id, node_id, scheduled_at, attempt, batch) WHERE status <> 'fenced' DO NOTHING
  RETURNING %s
),
u AS (
  UPDATE easyjob_tasks k SET next_start_time = ?::timestamptz
  FROM x WHERE k.id = x.task_id AND ?::timestamptz IS NOT NULL AND k.next_start_time < ?::timestamptz
)
SELECT * FROM x`

// StartBroadcast records one node's start of a fire of a broadcast task.
func (s *Store) StartBroadcast(ctx context.Context, b repository.BroadcastStart) (repository.Execution, error) {
	var next any
	if !b.Next.IsZero() {
		next = b.Next
	}
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf(startBroadcastSQL, execCols("x")),
		int64(b.Task), b.Revision, int64(b.Node), b.ScheduledAt, next, next, next)
	if err != nil {
		return repository.Execution{}, fmt.Errorf("easyjob/postgres: start broadcast run of task %d: %w", b.Task, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return repository.Execution{}, fmt.Errorf("easyjob/postgres: start broadcast run of task %d: %w", b.Task, err)
		}
		return repository.Execution{}, fmt.Errorf("%w: task %d, fire %s, node %d: paused, finished, removed, redefined, or started already",
			repository.ErrBroadcastNotStarted, b.Task, b.ScheduledAt.UTC().Format(time.RFC3339Nano), b.Node)
	}
	var r execScan
	if err := rows.Scan(r.dest()...); err != nil {
		return repository.Execution{}, fmt.Errorf("easyjob/postgres: start broadcast run of task %d: %w", b.Task, err)
	}
	e, _ := r.execution()
	return e, rows.Err()
}

// abandonBroadcastsSQL closes the running rows of the group's broadcast
// tasks whose node is dead (no heartbeat within the threshold, by the
// database's clock) or gone, as abandoned; it reaches them through the
// partial index of running executions.
const abandonBroadcastsSQL = `UPDATE easyjob_executions x
SET status = 'abandoned', finished_at = now(), error = ?::text
FROM easyjob_tasks t
WHERE t.group_name = ? AND (t.options->>'broadcast')::boolean AND x.task_id = t.id AND x.status = 'running'
  AND NOT EXISTS (
    SELECT 1 FROM easyjob_nodes n
    WHERE n.id = x.node_id AND n.heartbeat_at >= now() - (?::bigint * interval '1 microsecond')
  )`

// AbandonBroadcasts closes the running broadcast rows of dead nodes.
func (s *Store) AbandonBroadcasts(ctx context.Context, group string, deadAfter time.Duration) (int, error) {
	res, err := s.db.ExecContext(ctx, abandonBroadcastsSQL, repository.BroadcastAbandoned, group, micros(deadAfter))
	if err != nil {
		return 0, fmt.Errorf("easyjob/postgres: abandon broadcast runs of dead nodes of %q: %w", group, err)
	}
	k, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("easyjob/postgres: abandon broadcast runs of dead nodes of %q: %w", group, err)
	}
	return int(k), nil
}
