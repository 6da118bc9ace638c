-- Why each run ran, and who did what.
--
-- fire_kind: the kind of the task's pending fire when it is not the
-- cron's ('manual': an operator's trigger made it due). Set by a trigger,
-- cleared by the finish that schedules the next fire.
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS fire_kind text NOT NULL DEFAULT '';
-- kind: why the run ran (cron, manual, retry, misfire, chain); '' for a
-- run recorded before this migration.
ALTER TABLE easyjob_executions ADD COLUMN IF NOT EXISTS kind text NOT NULL DEFAULT '';

-- The audit log: every operator action (pause, resume, trigger,
-- reschedule, reset, remove, prune), written in the same transaction as
-- the action itself, with who did it, through what and from where.
CREATE TABLE IF NOT EXISTS easyjob_audit (
    id         bigserial   PRIMARY KEY,
    group_name text        NOT NULL,
    at         timestamptz NOT NULL DEFAULT now(),
    actor      text        NOT NULL,
    via        text        NOT NULL DEFAULT '',
    origin     text        NOT NULL DEFAULT '',
    action     text        NOT NULL,
    task       text        NOT NULL DEFAULT '',
    detail     text        NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS easyjob_audit_group_idx ON easyjob_audit (group_name, id DESC);
