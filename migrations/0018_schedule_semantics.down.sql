DROP TRIGGER IF EXISTS easyjob_tasks_due_at_insert ON easyjob_tasks;
CREATE TRIGGER easyjob_tasks_due_at_insert BEFORE INSERT ON easyjob_tasks
    FOR EACH ROW WHEN (NEW.due_at IS DISTINCT FROM NEW.next_start_time)
    EXECUTE FUNCTION easyjob_tasks_due_at();
DROP TRIGGER IF EXISTS easyjob_tasks_due_at_update ON easyjob_tasks;
CREATE TRIGGER easyjob_tasks_due_at_update BEFORE UPDATE ON easyjob_tasks
    FOR EACH ROW WHEN (NEW.status = 'pending' AND NEW.due_at IS DISTINCT FROM NEW.next_start_time)
    EXECUTE FUNCTION easyjob_tasks_due_at();
CREATE OR REPLACE FUNCTION easyjob_tasks_due_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.due_at := NEW.next_start_time;
    RETURN NEW;
END $$;
UPDATE easyjob_tasks SET due_at = next_start_time WHERE due_at IS DISTINCT FROM next_start_time;

ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS fires;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS backfill_to;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS backfill_at;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS backfill_next;

DELETE FROM easyjob_executions WHERE batch <> 0;
CREATE UNIQUE INDEX IF NOT EXISTS easyjob_executions_live_start_key
    ON easyjob_executions (task_id, node_id, scheduled_at, attempt) WHERE status <> 'fenced';
DROP INDEX IF EXISTS easyjob_executions_run_key;
ALTER TABLE easyjob_executions DROP COLUMN IF EXISTS batch;

UPDATE easyjob_executions SET status = 'failed' WHERE status = 'cancelled';
ALTER TABLE easyjob_executions DROP CONSTRAINT IF EXISTS easyjob_executions_status_check;
ALTER TABLE easyjob_executions ADD CONSTRAINT easyjob_executions_status_check
    CHECK (status IN ('running', 'succeeded', 'failed', 'timed_out', 'abandoned', 'fenced', 'skipped'));
