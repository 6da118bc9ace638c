-- Schedule semantics: overlap policies, backfill and a bound on fires.

-- A run whose job was cancelled by its task's overlap policy (cancel,
-- terminate) is recorded 'cancelled'.
ALTER TABLE easyjob_executions DROP CONSTRAINT IF EXISTS easyjob_executions_status_check;
ALTER TABLE easyjob_executions ADD CONSTRAINT easyjob_executions_status_check
    CHECK (status IN ('running', 'succeeded', 'failed', 'timed_out', 'abandoned', 'fenced', 'skipped', 'cancelled'));

-- backfill_next: the nominal time of the next fire of a backfill an
-- operator asked for (Client.Backfill), NULL when none is pending;
-- backfill_to: the end of that backfill's range; backfill_at: when it
-- was asked for (a chain fire of it resumes only runs of it since then). next_start_time stays
-- the cron's own next fire throughout, so a backfill moves no cron fire.
-- fires: the runs of the task's fires so far (cron, buffered, misfire
-- and manual fires; not retries, chain steps or backfill), which the
-- task's MaxFires option compares with.
-- None is indexed: a finish that keeps its claim stays a HOT update.
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS backfill_next timestamptz;
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS backfill_to timestamptz;
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS backfill_at timestamptz;
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS fires bigint NOT NULL DEFAULT 0;

-- batch tells apart the runs of one fire on one node that are not retries
-- of each other: 0 for the fire's own runs, the backfill's backfill_at (in
-- microseconds) for a backfill's, so that a backfill of a fire that ran,
-- or a second backfill of the same range, gets rows of its own. A retried
-- start or finish (its reply lost) still finds its row by the key.
ALTER TABLE easyjob_executions ADD COLUMN IF NOT EXISTS batch bigint NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX IF NOT EXISTS easyjob_executions_run_key
    ON easyjob_executions (task_id, node_id, scheduled_at, attempt, batch) WHERE status <> 'fenced';
DROP INDEX IF EXISTS easyjob_executions_live_start_key;

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
