DROP INDEX IF EXISTS easyjob_executions_unusual_idx;
DROP INDEX IF EXISTS easyjob_executions_failures_idx;
DROP INDEX IF EXISTS easyjob_executions_started_idx;
