-- The write path at the machine's limit: the per-fire task update is HOT.
--
-- A finish that keeps its claim changes version, next_start_time, attempt
-- and the last_* columns of a 'doing' row. PostgreSQL updates a row in
-- place (HOT: no index entries written, no new page) only when no indexed
-- column changes, and next_start_time was the key of the loader's index.
-- The loader now reads due_at instead: next_start_time copied only while
-- the row is pending (the trigger below, so every writer keeps it), left
-- alone while a node holds the row. next_start_time stays what every
-- reader reads.
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS due_at timestamptz;
UPDATE easyjob_tasks SET due_at = next_start_time WHERE due_at IS DISTINCT FROM next_start_time;

CREATE OR REPLACE FUNCTION easyjob_tasks_due_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.due_at := NEW.next_start_time;
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS easyjob_tasks_due_at_insert ON easyjob_tasks;
CREATE TRIGGER easyjob_tasks_due_at_insert BEFORE INSERT ON easyjob_tasks
    FOR EACH ROW EXECUTE FUNCTION easyjob_tasks_due_at();
-- Only rows that are (or become) pending with a stale due_at call the
-- function: a kept claim's finish ('doing' to 'doing') does not.
DROP TRIGGER IF EXISTS easyjob_tasks_due_at_update ON easyjob_tasks;
CREATE TRIGGER easyjob_tasks_due_at_update BEFORE UPDATE ON easyjob_tasks
    FOR EACH ROW WHEN (NEW.status = 'pending' AND NEW.due_at IS DISTINCT FROM NEW.next_start_time)
    EXECUTE FUNCTION easyjob_tasks_due_at();

CREATE INDEX IF NOT EXISTS easyjob_tasks_pending_due_idx ON easyjob_tasks (group_name, due_at)
    WHERE status = 'pending' AND parent_id IS NULL;
DROP INDEX IF EXISTS easyjob_tasks_due_idx;

-- Room on each page for the updated row versions, so HOT finds space.
ALTER TABLE easyjob_tasks SET (fillfactor = 70);
