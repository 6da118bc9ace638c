package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// startsSQL inserts the running executions of a batch in one statement,
// each only where its fence holds (no row lock, as in StartExecution). A
// retried start (its first reply lost) finds its row by the start key
// (task, node, fire, attempt) instead of writing a second one;
// the final select returns, in batch order, the inserted row or NULLs for
// a lost fence. Claims in one batch name distinct tasks.
const startsSQL = `WITH v AS (
  SELECT * FROM unnest(?::int[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::timestamptz[], ?::int[], ?::text[])
    AS v(ord, id, version, node_id, parent, scheduled, attempt, misfire)
),
ins AS (
  INSERT INTO easyjob_executions AS x
    (task_id, parent_execution_id, node_id, scheduled_at, attempt, misfire, status, started_at)
  SELECT v.id, nullif(v.parent, 0), v.node_id, v.scheduled, greatest(v.attempt, 1), v.misfire, 'running', now()
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
	// One array per column (unnest): the statement does not grow with the
	// batch, see finishSQL.
	var (
		ord, attempt              []int32
		id, version, node, parent []int64
		scheduled                 []time.Time
		misfire                   []string
	)
	for i, r := range reqs {
		at := r.Execution.ScheduledAt
		if at.IsZero() {
			at = time.Unix(0, 0) // the column is NOT NULL; callers always set it
		}
		ord = append(ord, int32(i))
		id = append(id, int64(r.Claim.ID))
		version = append(version, r.Claim.Version)
		node = append(node, int64(r.Claim.NodeID))
		parent = append(parent, r.Execution.ParentExecutionID)
		scheduled = append(scheduled, at)
		attempt = append(attempt, int32(r.Execution.Attempt))
		misfire = append(misfire, string(r.Execution.Misfire))
	}
	args := []any{
		pgdialect.Array(ord), pgdialect.Array(id), pgdialect.Array(version), pgdialect.Array(node),
		pgdialect.Array(parent), pgdialect.Array(scheduled), pgdialect.Array(attempt), pgdialect.Array(misfire),
	}
	q := fmt.Sprintf(startsSQL, execCols("x"), execCols("ins"))
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
