-- Exclusion calendars: named sets of dates, date ranges and crons that
-- the tasks of a group share (TaskOptions.Calendar); a fire that falls in
-- one is skipped and recorded so. The rules are one JSON document
-- (repository.Calendar): a calendar is read whole, by name or all of a
-- group, never searched inside.
CREATE TABLE IF NOT EXISTS easyjob_calendars (
    group_name text        NOT NULL,
    name       text        NOT NULL,
    rules      jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (group_name, name)
);
