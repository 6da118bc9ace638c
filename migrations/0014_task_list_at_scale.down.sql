DROP TRIGGER IF EXISTS easyjob_task_totals_delete ON easyjob_tasks;
DROP TRIGGER IF EXISTS easyjob_task_totals_update ON easyjob_tasks;
DROP TRIGGER IF EXISTS easyjob_task_totals_insert ON easyjob_tasks;
DROP FUNCTION IF EXISTS easyjob_task_totals_change();
DROP FUNCTION IF EXISTS easyjob_task_totals_insert();
DROP TABLE IF EXISTS easyjob_task_totals;
DROP INDEX IF EXISTS easyjob_tasks_notable_idx;
DROP INDEX IF EXISTS easyjob_tasks_name_bytes_idx;
