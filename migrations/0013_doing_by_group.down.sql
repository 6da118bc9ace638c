DROP INDEX IF EXISTS easyjob_tasks_doing_group_idx;
