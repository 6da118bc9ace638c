-- A fenced run (its result was not applied) no longer holds its start
-- key: the same node may run the same fire again (it lost the claim, then
-- claimed the fire anew), and that run gets a row of its own instead of
-- being written into the fenced one, where it could never show.
CREATE UNIQUE INDEX IF NOT EXISTS easyjob_executions_live_start_key
    ON easyjob_executions (task_id, node_id, scheduled_at, attempt) WHERE status <> 'fenced';
DROP INDEX IF EXISTS easyjob_executions_start_key;
