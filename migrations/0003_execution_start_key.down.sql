DROP INDEX IF EXISTS easyjob_executions_start_key;
