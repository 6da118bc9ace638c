ALTER TABLE easyjob_executions DROP COLUMN IF EXISTS log;
