-- The versioned definitions of the tasks: every definition a task takes
-- (a runtime schedule's creation, revision 1; each update or reschedule,
-- the new revision), who made it and when, written in the same statement
-- or transaction as the change. A run records the revision it ran
-- (easyjob_executions.revision).
--
-- actor, via, origin: the audit entry of the change (the actor's name,
-- the tool, where from); empty when the change carried none.
-- The rows go with their task (ON DELETE CASCADE); a tombstone revived
-- as a new task loses them.
CREATE TABLE IF NOT EXISTS easyjob_task_revisions (
    task_id    bigint      NOT NULL REFERENCES easyjob_tasks (id) ON DELETE CASCADE,
    revision   bigint      NOT NULL,
    handler    text        NOT NULL,
    cron       text        NOT NULL,
    args       jsonb,
    options    jsonb       NOT NULL DEFAULT '{}'::jsonb,
    actor      text        NOT NULL DEFAULT '',
    via        text        NOT NULL DEFAULT '',
    origin     text        NOT NULL DEFAULT '',
    changed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (task_id, revision)
);

-- The runtime schedules written before: their current definition, as
-- found by this migration (via 'migration', at its time); the earlier
-- ones were not kept.
INSERT INTO easyjob_task_revisions (task_id, revision, handler, cron, args, options, via)
SELECT t.id, t.revision, t.handler, t.cron, t.args, coalesce(t.options, '{}'::jsonb), 'migration'
FROM easyjob_tasks t
WHERE t.dynamic AND t.status <> 'removed'
ON CONFLICT (task_id, revision) DO NOTHING;
