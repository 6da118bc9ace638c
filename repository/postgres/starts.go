package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// startsSQL inserts the running executions of a batch in one statement,
// each only where its fence holds (no row lock, as in StartExecution). A
// retried start (its first reply lost) finds its row by the start key
// (task, node, fire, attempt) instead of writing a second one;
// the final select returns, in batch order, the inserted row or NULLs for
// a lost fence. Claims in one batch name distinct tasks.
const startsSQL = `WITH v(ord, id, version, node_id, parent, scheduled, attempt, misfire) AS (
  VALUES %s
),
ins AS (
  INSERT INTO easyjob_executions AS x
    (task_id, parent_execution_id, node_id, scheduled_at, attempt, misfire, status, started_at)
  SELECT v.id, v.parent, v.node_id, v.scheduled, greatest(v.attempt, 1), v.misfire, 'running', now()
  FROM v JOIN easyjob_tasks t
    ON t.id = v.id AND t.version = v.version AND t.node_id = v.node_id AND t.status = 'doing'
  ON CONFLICT (task_id, node_id, scheduled_at, attempt)
    DO UPDATE SET status = 'running', finished_at = NULL, error = ''
  RETURNING %s
)
SELECT %s FROM v LEFT JOIN ins ON ins.task_id = v.id ORDER BY v.ord`

// StartExecutions records many starts in one round trip.
func (s *Store) StartExecutions(ctx context.Context, reqs []repository.ExecStart) ([]repository.StartResult, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	rows := make([]string, len(reqs))
	args := make([]any, 0, 8*len(reqs))
	for i, r := range reqs {
		rows[i] = "(?::int, ?::bigint, ?::bigint, ?::bigint, ?::bigint, ?::timestamptz, ?::int, ?::text)"
		var parent any
		if r.Execution.ParentExecutionID != 0 {
			parent = r.Execution.ParentExecutionID
		}
		scheduled := r.Execution.ScheduledAt
		if scheduled.IsZero() {
			scheduled = time.Unix(0, 0) // the column is NOT NULL; callers always set it
		}
		args = append(args, i, int64(r.Claim.ID), r.Claim.Version, int64(r.Claim.NodeID),
			parent, scheduled, r.Execution.Attempt, string(r.Execution.Misfire))
	}
	q := fmt.Sprintf(startsSQL, join(rows), execCols("x"), execCols("ins"))
	res, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: start %d executions: %w", len(reqs), err)
	}
	defer res.Close()
	out := make([]repository.StartResult, 0, len(reqs))
	for res.Next() {
		var r execScan
		if err := res.Scan(r.dest()...); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: start executions: %w", err)
		}
		e, ok := r.execution()
		if !ok {
			out = append(out, repository.StartResult{Err: claimLost(reqs[len(out)].Claim)})
			continue
		}
		out = append(out, repository.StartResult{Execution: e})
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: start executions: %w", err)
	}
	if len(out) != len(reqs) {
		return nil, fmt.Errorf("easyjob/postgres: start executions: %d results for %d requests", len(out), len(reqs))
	}
	return out, nil
}
