package postgres

import (
	"context"
	"fmt"

	"github.com/easyjob-go/easyjob/repository"
)

// endRunSQL records the end of a run that went on without its claim
// (repository.RunStore.EndRun), in one statement:
//   - e writes the run's row by its start key: the end of the running
//     row its start (or its claim's finish) wrote, or the whole run when
//     neither has been written yet. A row that already ended (a retried
//     call) is left alone, and then so is the task.
//   - l locks the task's row and works out whether this end pauses it
//     (PauseAfter reached).
//   - u carries the run's status into the task's last status, error and
//     failures; a pause is Pause's (a pending row parks, version+1; a
//     claimed one parks at its next finish); the version is not touched
//     otherwise, so the holder's claim stays valid.
//   - pa records the pause in the audit log.
const endRunSQL = `WITH v AS (
  SELECT ?::bigint AS task, ?::bigint AS node, ?::timestamptz AS scheduled, ?::int AS attempt, ?::bigint AS batch,
    ?::text AS kind, ?::text AS misfire, ?::text AS args, ?::bigint AS revision, ?::text AS status, ?::text AS err,
    ?::bigint AS started_us, ?::bigint AS ran_us, ?::int AS pause_after, ?::text AS log
),
e AS (
  INSERT INTO easyjob_executions AS x
    (task_id, node_id, scheduled_at, attempt, batch, kind, misfire, args, revision, status, error, started_at, finished_at, log)
  SELECT v.task, v.node, v.scheduled, greatest(v.attempt, 1), v.batch, v.kind, v.misfire, nullif(v.args, '')::jsonb, v.revision,
    v.status, v.err,
    least(timestamptz 'epoch' + v.started_us * interval '1 microsecond', statement_timestamp()),
    least(timestamptz 'epoch' + (v.started_us + v.ran_us) * interval '1 microsecond', statement_timestamp()), v.log
  FROM v
  ON CONFLICT (task_id, node_id, scheduled_at, attempt, batch) WHERE status <> 'fenced'
  DO UPDATE SET status = excluded.status, error = excluded.error,
    started_at = excluded.started_at, finished_at = excluded.finished_at,
    log = CASE WHEN excluded.log = '' THEN x.log ELSE excluded.log END
  WHERE x.status IN ('running', 'abandoned')
  RETURNING x.id
),
l AS (
  SELECT t.id, t.paused AS was_paused,
    (v.pause_after > 0 AND v.status IN ('failed', 'timed_out') AND t.failures + 1 >= v.pause_after) AS pausing
  FROM easyjob_tasks t JOIN v ON t.id = v.task
  WHERE EXISTS (SELECT 1 FROM e)
  FOR NO KEY UPDATE OF t
),
u AS (
  UPDATE easyjob_tasks t SET
    last_status = v.status,
    last_error = v.err,
    last_finished_at = statement_timestamp(),
    failures = CASE WHEN v.status IN ('failed', 'timed_out') THEN t.failures + 1
      WHEN v.status = 'succeeded' THEN 0 ELSE t.failures END,
    paused = t.paused OR l.pausing,
    status = CASE WHEN l.pausing AND t.status = 'pending' THEN 'paused' ELSE t.status END,
    version = t.version + CASE WHEN l.pausing AND t.status = 'pending' THEN 1 ELSE 0 END
  FROM v, l
  WHERE t.id = v.task AND l.id = t.id
  RETURNING t.group_name, t.name, t.failures, t.last_error, l.pausing AND NOT l.was_paused AS paused_now
),
pa AS (
  INSERT INTO easyjob_audit (group_name, task, actor, via, action, detail)
  SELECT u.group_name, u.name, 'node ' || v.node, 'node', 'pause',
    format('after %s failed runs in a row (the last: %s)', u.failures, u.last_error)
  FROM u, v WHERE u.paused_now
)
SELECT (SELECT count(*) FROM e), (SELECT count(*) FROM u)`

// EndRun records the end of a run that went on without its claim.
func (s *Store) EndRun(ctx context.Context, r repository.RunEnd) error {
	var started int64
	if !r.Started.IsZero() {
		started = r.Started.UnixMicro()
	}
	var ended, tasks int
	err := s.db.QueryRowContext(ctx, endRunSQL,
		int64(r.Task), int64(r.Node), r.Run.ScheduledAt, max(r.Run.Attempt, 1), r.Run.Batch,
		string(r.Run.Kind), string(r.Run.Misfire), repository.RecordedArgs(r.Run.Args), r.Run.Revision,
		string(r.Status), cleanText(r.Error), started, r.Ran.Microseconds(), r.PauseAfter, cleanText(r.Log),
	).Scan(&ended, &tasks)
	if err != nil {
		return fmt.Errorf("easyjob/postgres: end the run of task %d at %s: %w", r.Task, r.Run.ScheduledAt.Format("2006-01-02T15:04:05.000Z07:00"), err)
	}
	return nil
}
