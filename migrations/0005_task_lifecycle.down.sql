-- Tombstones cannot be expressed in the older schema: drop them and their history.
DELETE FROM easyjob_tasks WHERE status = 'removed';
ALTER TABLE easyjob_tasks DROP CONSTRAINT IF EXISTS easyjob_tasks_status_check;
ALTER TABLE easyjob_tasks ADD CONSTRAINT easyjob_tasks_status_check
    CHECK (status IN ('pending', 'doing', 'paused', 'finished'));
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS stale_since;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS overridden_at;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS code_cron;
