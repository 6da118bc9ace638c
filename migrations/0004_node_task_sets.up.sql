-- Nodes publish the set of task names they registered (by id, the hash of
-- the sorted names; the names once per distinct set), so strategies choose
-- among the live nodes that can run a task (mixed versions in a rolling
-- deploy) and operators see tasks that no live node registers (stale).
ALTER TABLE easyjob_nodes ADD COLUMN IF NOT EXISTS task_set text NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS easyjob_task_sets (
    id         text        PRIMARY KEY,
    names      text[]      NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
