DROP TABLE IF EXISTS easyjob_task_sets;
ALTER TABLE easyjob_nodes DROP COLUMN IF EXISTS task_set;
