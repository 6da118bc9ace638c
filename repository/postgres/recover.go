package postgres

import (
	"context"
	"fmt"
	"time"

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

// Recover resets one orphan in one statement: the version-checked reset of
// the task, the abandonment of the dead node's running executions of it
// (x reads u, so only if the reset happened) and the group's wake-up.
//
// A StartExecution of the same claim racing this statement (a zombie node
// resuming at that instant) may insert an execution this statement's
// snapshot cannot see; it stays running until the zombie's finish, which
// is fenced, closes it as fenced (TestStartExecutionRacingRecover).
func (s *Store) Recover(ctx context.Context, r repository.Recovery) error {
	q := `WITH u AS (
  UPDATE easyjob_tasks t
  SET status = 'pending', node_id = NULL, version = t.version + 1, updated_at = now(),
      next_start_time = coalesce(?::timestamptz, t.next_start_time)
  WHERE t.id = ?::bigint AND t.version = ?::bigint AND t.node_id = ?::bigint AND t.status = 'doing'
  RETURNING t.id, t.group_name
),
x AS (
  UPDATE easyjob_executions e
  SET status = 'abandoned', finished_at = now(), error = ?::text
  FROM u
  WHERE e.task_id = u.id AND e.node_id = ?::bigint AND e.status = 'running'
  RETURNING e.id
),
n AS (SELECT pg_notify('` + notifyChannel + `', u.group_name) FROM u)
SELECT (SELECT count(*) FROM u), (SELECT count(*) FROM n)`
	var reset, notified int
	err := s.db.QueryRowContext(ctx, q,
		nullTime(r.Next), int64(r.Ref.ID), r.Ref.Version, int64(r.DeadNode),
		fmt.Sprintf("node %d died", r.DeadNode), int64(r.DeadNode)).Scan(&reset, &notified)
	if err != nil {
		return fmt.Errorf("easyjob/postgres: recover task %d: %w", r.Ref.ID, err)
	}
	if reset == 0 {
		return claimLost(repository.Claim{ID: r.Ref.ID, Version: r.Ref.Version, NodeID: r.DeadNode})
	}
	return nil
}
