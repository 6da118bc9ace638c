-- Runtime schedules cannot be expressed in the older schema (no code
-- registers their names): drop them and their history.
DROP INDEX IF EXISTS easyjob_tasks_registered_idx;
DELETE FROM easyjob_tasks WHERE dynamic;
DROP TABLE IF EXISTS easyjob_handlers;
ALTER TABLE easyjob_executions DROP COLUMN IF EXISTS revision;
ALTER TABLE easyjob_executions DROP COLUMN IF EXISTS args;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS held_fire;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS revision;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS fire_args;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS args;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS dynamic;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS handler;
