package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// startsSQL inserts the running executions of a batch in one statement,
// each only where its fence holds (no row lock, as in StartExecution),
// reaching the task rows by primary key only (fenceHolds). A retried
// start (its first reply lost) finds its row by the start key (task,
// node, fire, attempt) instead of writing a second one. It returns the
// rows written, each naming its task; a claim missing from it lost its
// fence (claims in one batch name distinct tasks).
const startsSQL = `WITH v AS (
  SELECT * FROM unnest(?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::timestamptz[], ?::int[], ?::text[], ?::text[],
    ?::text[], ?::bigint[], ?::bigint[])
    AS v(id, version, node_id, parent, scheduled, attempt, misfire, kind, args, revision, batch)
)
INSERT INTO easyjob_executions AS x
  (task_id, parent_execution_id, node_id, scheduled_at, attempt, misfire, kind, args, revision, batch, status, started_at)
SELECT v.id, nullif(v.parent, 0), v.node_id, v.scheduled, greatest(v.attempt, 1), v.misfire, v.kind,
  nullif(v.args, '')::jsonb, v.revision, v.batch, 'running', now()
FROM v JOIN easyjob_tasks c ON c.id = v.id
WHERE c.id = ANY(?::bigint[]) AND ` + fenceHolds + `
ON CONFLICT (task_id, node_id, scheduled_at, attempt, batch) WHERE status <> 'fenced'
  DO UPDATE SET
    status = CASE WHEN x.status IN ('running', 'abandoned') THEN 'running' ELSE x.status END,
    finished_at = CASE WHEN x.status IN ('running', 'abandoned') THEN NULL ELSE x.finished_at END,
    error = CASE WHEN x.status IN ('running', 'abandoned') THEN '' ELSE x.error END
RETURNING %s`

// StartExecutions records many starts in one round trip.
func (s *Store) StartExecutions(ctx context.Context, reqs []repository.ExecStart) ([]repository.StartResult, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	// One array per column (unnest): the statement does not grow with the
	// batch, see finishSQL.
	var (
		attempt                   []int32
		id, version, node, parent []int64
		revision, batch           []int64
		scheduled                 []time.Time
		misfire, kind, runArgs    []string
	)
	at := make(map[repository.TaskID]int, len(reqs))
	for i, r := range reqs {
		when := r.Execution.ScheduledAt
		if when.IsZero() {
			when = time.Unix(0, 0) // the column is NOT NULL; callers always set it
		}
		if err := repository.CheckArgs(fmt.Sprintf("start execution of task %d", r.Claim.ID), r.Execution.Args); err != nil {
			return nil, err
		}
		at[r.Claim.ID] = i
		id = append(id, int64(r.Claim.ID))
		version = append(version, r.Claim.Version)
		node = append(node, int64(r.Claim.NodeID))
		parent = append(parent, r.Execution.ParentExecutionID)
		scheduled = append(scheduled, when)
		attempt = append(attempt, int32(r.Execution.Attempt))
		misfire = append(misfire, string(r.Execution.Misfire))
		kind = append(kind, string(r.Execution.Kind))
		runArgs = append(runArgs, r.Execution.Args)
		revision = append(revision, r.Execution.Revision)
		batch = append(batch, r.Execution.Batch)
	}
	args := []any{
		pgdialect.Array(id), pgdialect.Array(version), pgdialect.Array(node),
		pgdialect.Array(parent), pgdialect.Array(scheduled), pgdialect.Array(attempt), pgdialect.Array(misfire),
		pgdialect.Array(kind), pgdialect.Array(runArgs), pgdialect.Array(revision), pgdialect.Array(batch),
		pgdialect.Array(id),
	}
	q := fmt.Sprintf(startsSQL, execCols("x"))
	res, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: start %d executions: %w", len(reqs), err)
	}
	defer res.Close()
	out := make([]repository.StartResult, len(reqs))
	for i, r := range reqs {
		out[i].Err = claimLost(r.Claim) // unless its row comes back
	}
	for res.Next() {
		var r execScan
		if err := res.Scan(r.dest()...); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: start executions: %w", err)
		}
		e, ok := r.execution()
		i, known := at[e.TaskID]
		if !ok || !known {
			return nil, fmt.Errorf("easyjob/postgres: start executions: unexpected row for task %d", e.TaskID)
		}
		out[i] = repository.StartResult{Execution: e}
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: start executions: %w", err)
	}
	return out, nil
}
