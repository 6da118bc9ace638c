-- DAG steps (issue 27): a step's row waits at next_start_time
-- 9999-01-01 until its parents complete a fire. dag_fire is the last fire
-- the step was made due for (the fires at or before it are passed);
-- dag_inputs the parent runs that fire follows ({"parent": execution id}),
-- whose results the step's run reads. Neither is indexed: an update of
-- them stays HOT.
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS dag_fire timestamptz;
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS dag_inputs jsonb;

-- A run's result (easyjob.SetResult), JSON text, for the steps after it.
ALTER TABLE easyjob_executions ADD COLUMN IF NOT EXISTS result text;
