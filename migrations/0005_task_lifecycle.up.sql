-- Task lifecycle: operator overrides that survive deploys, stale tasks,
-- removal with the history kept.
--
-- code_cron is the cron the code registered last; cron is the one in force.
-- overridden_at is set while an operator's reschedule overrides the code:
-- a registration of the same code cron keeps it, a different one clears it.
-- Existing rows take their current cron as the code's (an override made
-- before this migration yields to the next registration, as it always did).
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS code_cron text;
UPDATE easyjob_tasks SET code_cron = cron WHERE code_cron IS NULL;
ALTER TABLE easyjob_tasks ALTER COLUMN code_cron SET DEFAULT '';
ALTER TABLE easyjob_tasks ALTER COLUMN code_cron SET NOT NULL;
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS overridden_at timestamptz;
-- stale_since: since when no live node registers the task (kept by the
-- node that prunes stale tasks; NULL otherwise).
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS stale_since timestamptz;
-- 'removed': a removed task whose history was kept (a tombstone only the
-- history reads; registering the name again revives it).
ALTER TABLE easyjob_tasks DROP CONSTRAINT IF EXISTS easyjob_tasks_status_check;
ALTER TABLE easyjob_tasks ADD CONSTRAINT easyjob_tasks_status_check
    CHECK (status IN ('pending', 'doing', 'paused', 'finished', 'removed'));
