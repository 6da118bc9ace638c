-- Alerts (easyjob/alert): the rules added at runtime (the CLI, the
-- dashboard; rules in code live in each node's Config), and the alert
-- events that make an alert fire once per occurrence across the group.
-- A node records an event with INSERT ... ON CONFLICT DO NOTHING: the
-- unique key (group, rule, subject, key) records each occurrence once,
-- and the partial unique index keeps one open event per rule and subject;
-- the node whose insert wins owns the delivery. A peer takes over the
-- delivery of a dead owner with a version-checked update.
CREATE TABLE IF NOT EXISTS easyjob_alert_rules (
    id             bigserial   PRIMARY KEY,
    group_name     text        NOT NULL,
    name           text        NOT NULL,
    task           text        NOT NULL DEFAULT '',
    kind           text        NOT NULL,
    count          integer     NOT NULL DEFAULT 0,
    after_ms       bigint      NOT NULL DEFAULT 0,
    webhook_url    text        NOT NULL DEFAULT '',
    webhook_secret text        NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    created_by     text        NOT NULL DEFAULT '',
    UNIQUE (group_name, name)
);

CREATE TABLE IF NOT EXISTS easyjob_alert_events (
    id                bigserial   PRIMARY KEY,
    group_name        text        NOT NULL,
    rule              text        NOT NULL,
    kind              text        NOT NULL,
    subject           text        NOT NULL,
    event_key         text        NOT NULL,
    message           text        NOT NULL DEFAULT '',
    count             integer     NOT NULL DEFAULT 1,
    fired_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    resolved_at       timestamptz,
    resolve_message   text        NOT NULL DEFAULT '',
    owner             bigint      NOT NULL,
    version           bigint      NOT NULL DEFAULT 1,
    delivered         boolean     NOT NULL DEFAULT false,
    resolve_delivered boolean     NOT NULL DEFAULT false,
    attempts          integer     NOT NULL DEFAULT 0,
    last_error        text        NOT NULL DEFAULT '',
    UNIQUE (group_name, rule, subject, event_key)
);
CREATE UNIQUE INDEX IF NOT EXISTS easyjob_alert_events_open_idx
    ON easyjob_alert_events (group_name, rule, subject) WHERE resolved_at IS NULL;
-- What every node reads each alert pass: the open events and those with
-- a notification to deliver.
CREATE INDEX IF NOT EXISTS easyjob_alert_events_live_idx
    ON easyjob_alert_events (group_name, id)
    WHERE resolved_at IS NULL OR NOT delivered OR NOT resolve_delivered;
CREATE INDEX IF NOT EXISTS easyjob_alert_events_group_idx ON easyjob_alert_events (group_name, id);
