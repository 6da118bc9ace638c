-- Operator views (the dashboard) over a long history, at the cost of one
-- page, not of the history's length:
-- recent executions of a group, newest first (timeline, fire statistics);
CREATE INDEX IF NOT EXISTS easyjob_executions_started_idx ON easyjob_executions (started_at);
-- failures of the last hour (only unsuccessful runs are indexed: few rows);
CREATE INDEX IF NOT EXISTS easyjob_executions_failures_idx ON easyjob_executions (started_at)
    WHERE status IN ('failed', 'timed_out', 'abandoned', 'fenced');
-- a task's runs of one rare status (failed, abandoned, ...), newest first,
-- without reading its successful ones.
CREATE INDEX IF NOT EXISTS easyjob_executions_unusual_idx ON easyjob_executions (task_id, id DESC)
    WHERE status NOT IN ('succeeded', 'running');
