DROP INDEX IF EXISTS easyjob_tasks_cancel_idx;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS cancel_by;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS cancel_at;
