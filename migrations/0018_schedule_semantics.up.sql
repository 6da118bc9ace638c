-- Schedule semantics: overlap policies, backfill and a bound on fires.

-- A run whose job was cancelled by its task's overlap policy (cancel,
-- terminate) is recorded 'cancelled'.
ALTER TABLE easyjob_executions DROP CONSTRAINT IF EXISTS easyjob_executions_status_check;
ALTER TABLE easyjob_executions ADD CONSTRAINT easyjob_executions_status_check
    CHECK (status IN ('running', 'succeeded', 'failed', 'timed_out', 'abandoned', 'fenced', 'skipped', 'cancelled'));

-- backfill_next: the nominal time of the next fire of a backfill an
-- operator asked for (Client.Backfill), NULL when none is pending;
-- backfill_to: the end of that backfill's range. next_start_time stays
-- the cron's own next fire throughout, so a backfill moves no cron fire.
-- fires: the runs of the task's fires so far (cron, buffered, misfire
-- and manual fires; not retries, chain steps or backfill), which the
-- task's MaxFires option compares with.
-- None is indexed: a finish that keeps its claim stays a HOT update.
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS backfill_next timestamptz;
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS backfill_to timestamptz;
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS fires bigint NOT NULL DEFAULT 0;

-- A pending row is due at its next fire, or at once for a pending
-- backfill fire (least ignores a NULL backfill_next).
CREATE OR REPLACE FUNCTION easyjob_tasks_due_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.due_at := least(NEW.backfill_next, NEW.next_start_time);
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS easyjob_tasks_due_at_insert ON easyjob_tasks;
CREATE TRIGGER easyjob_tasks_due_at_insert BEFORE INSERT ON easyjob_tasks
    FOR EACH ROW WHEN (NEW.due_at IS DISTINCT FROM least(NEW.backfill_next, NEW.next_start_time))
    EXECUTE FUNCTION easyjob_tasks_due_at();
DROP TRIGGER IF EXISTS easyjob_tasks_due_at_update ON easyjob_tasks;
CREATE TRIGGER easyjob_tasks_due_at_update BEFORE UPDATE ON easyjob_tasks
    FOR EACH ROW WHEN (NEW.status = 'pending' AND NEW.due_at IS DISTINCT FROM least(NEW.backfill_next, NEW.next_start_time))
    EXECUTE FUNCTION easyjob_tasks_due_at();
