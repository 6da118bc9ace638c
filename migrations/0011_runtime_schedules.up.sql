-- Schedules created at runtime: a handler kind registered in code, fired
-- on a cron with JSON arguments, its definition kept in the store.
--
-- handler: the kind of code that runs the task; a registered task's own
-- name (backfilled below), a runtime schedule's handler kind. The loader
-- selects due tasks by it.
-- dynamic: a schedule created at runtime; no registration writes, marks
-- stale or removes it.
-- args: the schedule's arguments (NULL: none); fire_args: the arguments
-- of the pending manual fire (a trigger with arguments), NULL otherwise.
-- revision: counts the edits of the definition (an update, a reschedule):
-- the finish of a fire that ran an older revision leaves the row's next
-- fire in place and does not keep its claim.
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS handler text NOT NULL DEFAULT '';
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS dynamic boolean NOT NULL DEFAULT false;
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS args jsonb;
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS fire_args jsonb;
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS revision bigint NOT NULL DEFAULT 1;
-- held_fire: the claimed fire of a doing row an operator re-timed (its
-- next_start_time then says the new cron's first fire after it), so that
-- a second re-timing during the claim measures from it too; cleared by
-- the row's finish and by its next claim.
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS held_fire timestamptz;
UPDATE easyjob_tasks SET handler = name WHERE handler = '';

-- What each run ran with: its arguments (NULL: none) and the revision of
-- the definition (0: a run recorded before revisions were).
ALTER TABLE easyjob_executions ADD COLUMN IF NOT EXISTS args jsonb;
ALTER TABLE easyjob_executions ADD COLUMN IF NOT EXISTS revision bigint NOT NULL DEFAULT 0;

-- The handler kinds the nodes of a group run, with the JSON schema of
-- their arguments, so that a tool without the code can check a
-- schedule's arguments before writing it.
CREATE TABLE IF NOT EXISTS easyjob_handlers (
    group_name text        NOT NULL,
    kind       text        NOT NULL,
    schema     jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (group_name, kind)
);

-- A node's upkeep reads the tasks registered in code (stale tasks), never
-- the runtime schedules, however many there are.
CREATE INDEX IF NOT EXISTS easyjob_tasks_registered_idx ON easyjob_tasks (group_name, id) WHERE NOT dynamic;
