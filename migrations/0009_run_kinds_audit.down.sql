DROP TABLE IF EXISTS easyjob_audit;
ALTER TABLE easyjob_executions DROP COLUMN IF EXISTS kind;
ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS fire_kind;
