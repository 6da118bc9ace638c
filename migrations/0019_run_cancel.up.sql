-- Cancel a run (Client.Cancel, easyjob cancel, the dashboard): the
-- operator's request is stamped on the task's row, with who asked; the
-- node running the task's fire cancels its job's context when it reads
-- the request (CancelsSince). The version is not touched: a request
-- fences no claim. Only the partial index reads cancel_at, and no finish
-- writes it, so a finish that keeps its claim stays a HOT update.
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS cancel_at timestamptz;
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS cancel_by text NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS easyjob_tasks_cancel_idx ON easyjob_tasks (group_name, cancel_at)
    WHERE cancel_at IS NOT NULL;
