ALTER TABLE easyjob_tasks RESET (fillfactor);
CREATE INDEX IF NOT EXISTS easyjob_tasks_due_idx ON easyjob_tasks (group_name, next_start_time)
    WHERE status = 'pending' AND parent_id IS NULL;
DROP INDEX IF EXISTS easyjob_tasks_pending_due_idx;
DROP TRIGGER IF EXISTS easyjob_tasks_due_at_update ON easyjob_tasks;
DROP TRIGGER IF EXISTS easyjob_tasks_due_at_insert ON easyjob_tasks;
DROP FUNCTION IF EXISTS easyjob_tasks_due_at();
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS due_at;
