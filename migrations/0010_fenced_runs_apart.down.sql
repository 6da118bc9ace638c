-- Fenced rows that share a start key with a later run are kept apart by
-- their ids: the older key allowed one row per key, so the newest wins.
DELETE FROM easyjob_executions f USING easyjob_executions l
WHERE f.status = 'fenced' AND l.id > f.id AND l.task_id = f.task_id AND l.node_id = f.node_id
  AND l.scheduled_at = f.scheduled_at AND l.attempt = f.attempt;
CREATE UNIQUE INDEX IF NOT EXISTS easyjob_executions_start_key
    ON easyjob_executions (task_id, node_id, scheduled_at, attempt);
DROP INDEX IF EXISTS easyjob_executions_live_start_key;
