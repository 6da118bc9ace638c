-- A peer re-running a fire whose node died mid-chain resumes the chain:
-- it finds the abandoned run of the fire and the runs recorded under it.
-- Both indexes are partial, so the hot path (running -> succeeded) does
-- not maintain them.
CREATE INDEX IF NOT EXISTS easyjob_executions_abandoned_idx
    ON easyjob_executions (task_id, scheduled_at) WHERE status = 'abandoned';
CREATE INDEX IF NOT EXISTS easyjob_executions_parent_idx
    ON easyjob_executions (parent_execution_id) WHERE parent_execution_id IS NOT NULL;
