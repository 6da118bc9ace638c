ALTER TABLE easyjob_executions DROP COLUMN IF EXISTS result;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS dag_inputs;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS dag_fire;
