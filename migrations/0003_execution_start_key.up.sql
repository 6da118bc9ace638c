-- One execution row per (task, node, fire, attempt): a start whose reply
-- was lost (connection cut after commit) is retried and finds its row
-- instead of writing a second one.
CREATE UNIQUE INDEX IF NOT EXISTS easyjob_executions_start_key
    ON easyjob_executions (task_id, node_id, scheduled_at, attempt);
