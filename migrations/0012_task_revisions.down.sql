-- The older schema keeps no versioned definitions: they are dropped (the
-- runs keep the revision numbers they recorded).
DROP TABLE IF EXISTS easyjob_task_revisions;
