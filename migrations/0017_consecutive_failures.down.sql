ALTER TABLE easyjob_tasks DROP COLUMN IF EXISTS failures;
