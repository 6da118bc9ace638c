-- easy-job schema v1: nodes, tasks, executions. All scoped by group_name.
CREATE TABLE IF NOT EXISTS easyjob_nodes (
    id           bigserial   PRIMARY KEY,
    group_name   text        NOT NULL,
    name         text        NOT NULL,
    weight       integer     NOT NULL DEFAULT 1 CHECK (weight >= 1),
    counts       bigint      NOT NULL DEFAULT 0,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS easyjob_nodes_group_heartbeat_idx ON easyjob_nodes (group_name, heartbeat_at);

CREATE TABLE IF NOT EXISTS easyjob_tasks (
    id                bigserial   PRIMARY KEY,
    group_name        text        NOT NULL,
    name              text        NOT NULL,
    cron              text        NOT NULL DEFAULT '',
    parent_id         bigint      REFERENCES easyjob_tasks (id) ON DELETE SET NULL,
    status            text        NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'doing', 'paused', 'finished')),
    version           bigint      NOT NULL DEFAULT 1,
    node_id           bigint,
    next_start_time   timestamptz NOT NULL,
    attempt           integer     NOT NULL DEFAULT 1,
    paused            boolean     NOT NULL DEFAULT false,
    trigger_requested boolean     NOT NULL DEFAULT false,
    options           jsonb       NOT NULL DEFAULT '{}',
    last_status       text        NOT NULL DEFAULT '',
    last_error        text        NOT NULL DEFAULT '',
    last_finished_at  timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (group_name, name)
);
-- The loader's query: due pending root tasks of a group.
CREATE INDEX IF NOT EXISTS easyjob_tasks_due_idx ON easyjob_tasks (group_name, next_start_time)
    WHERE status = 'pending' AND parent_id IS NULL;
-- Reconcile and recovery: doing tasks by node.
CREATE INDEX IF NOT EXISTS easyjob_tasks_doing_idx ON easyjob_tasks (node_id) WHERE status = 'doing';
CREATE INDEX IF NOT EXISTS easyjob_tasks_parent_idx ON easyjob_tasks (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS easyjob_executions (
    id                  bigserial   PRIMARY KEY,
    task_id             bigint      NOT NULL REFERENCES easyjob_tasks (id) ON DELETE CASCADE,
    parent_execution_id bigint,
    node_id             bigint      NOT NULL,
    scheduled_at        timestamptz NOT NULL,
    started_at          timestamptz NOT NULL DEFAULT now(),
    finished_at         timestamptz,
    status              text        NOT NULL DEFAULT 'running'
                        CHECK (status IN ('running', 'succeeded', 'failed', 'timed_out', 'abandoned', 'fenced', 'skipped')),
    error               text        NOT NULL DEFAULT '',
    attempt             integer     NOT NULL DEFAULT 1,
    misfire             text        NOT NULL DEFAULT ''
);
-- History pages and retention: executions of a task, newest first.
CREATE INDEX IF NOT EXISTS easyjob_executions_task_idx ON easyjob_executions (task_id, id DESC);
CREATE INDEX IF NOT EXISTS easyjob_executions_running_idx ON easyjob_executions (task_id, node_id) WHERE status = 'running';
