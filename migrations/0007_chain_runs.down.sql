DROP INDEX IF EXISTS easyjob_executions_parent_idx;
DROP INDEX IF EXISTS easyjob_executions_abandoned_idx;
