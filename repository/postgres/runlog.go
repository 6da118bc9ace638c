package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// writeRunLogsSQL replaces the logs of running executions found by their
// start key (the partial unique index easyjob_executions_live_start_key),
// all of a flush in one statement.
const writeRunLogsSQL = `UPDATE easyjob_executions e SET log = v.log
FROM unnest(?::bigint[], ?::bigint[], ?::timestamptz[], ?::int[], ?::bigint[], ?::text[])
  AS v(task, node, scheduled, attempt, batch, log)
WHERE e.task_id = v.task AND e.node_id = v.node AND e.scheduled_at = v.scheduled
  AND e.attempt = v.attempt AND e.batch = v.batch AND e.status = 'running'`

// WriteRunLogs replaces the logs of running executions.
func (s *Store) WriteRunLogs(ctx context.Context, logs []repository.RunLogUpdate) (int, error) {
	if len(logs) == 0 {
		return 0, nil
	}
	task, node, batch := make([]int64, len(logs)), make([]int64, len(logs)), make([]int64, len(logs))
	scheduled, attempt, text := make([]time.Time, len(logs)), make([]int32, len(logs)), make([]string, len(logs))
	for i, l := range logs {
		task[i], node[i], batch[i] = int64(l.Task), int64(l.Node), l.Batch
		scheduled[i], attempt[i], text[i] = l.ScheduledAt, int32(max(l.Attempt, 1)), cleanText(l.Log)
	}
	res, err := s.db.ExecContext(ctx, writeRunLogsSQL, pgdialect.Array(task), pgdialect.Array(node),
		pgdialect.Array(scheduled), pgdialect.Array(attempt), pgdialect.Array(batch), pgdialect.Array(text))
	if err != nil {
		return 0, fmt.Errorf("easyjob/postgres: write the logs of %d running jobs: %w", len(logs), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("easyjob/postgres: write the logs of %d running jobs: %w", len(logs), err)
	}
	return int(n), nil
}

// RunLog reads one run of a task with its log.
func (s *Store) RunLog(ctx context.Context, group, name string, id int64) (repository.RunLog, error) {
	q := `SELECT t.name, ` + execCols("x") + `, x.log
FROM easyjob_tasks t
LEFT JOIN easyjob_executions x ON x.task_id = t.id AND x.id = ?
WHERE t.group_name = ? AND t.name = ?`
	var out repository.RunLog
	var r execScan
	var log sql.NullString
	err := s.db.QueryRowContext(ctx, q, id, group, name).Scan(append(append([]any{&out.Execution.TaskName}, r.dest()...), &log)...)
	if errors.Is(err, sql.ErrNoRows) {
		return out, notFound(group, name)
	}
	if err != nil {
		return out, fmt.Errorf("easyjob/postgres: log of run %d of %q: %w", id, name, err)
	}
	e, ok := r.execution()
	if !ok {
		return out, fmt.Errorf("easyjob/postgres: run %d of %q in group %q: %w", id, name, group, repository.ErrRunNotFound)
	}
	e.TaskName = out.Execution.TaskName
	out.Execution, out.Log = e, log.String
	return out, nil
}
