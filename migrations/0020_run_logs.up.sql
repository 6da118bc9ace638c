-- Run logs: the lines a job wrote through its context's logger
-- (easyjob.Logger), bounded per run by the node (Config.RunLogLimit), are
-- stored with the run's own row: its finish writes them in the statement
-- that closes the row, so a logging job costs no extra round trip, and
-- history retention prunes them with their runs. A job running longer
-- than a second has them written while it runs too (easyjob logs
-- --follow). Adding a column with a constant default rewrites nothing.
ALTER TABLE easyjob_executions ADD COLUMN IF NOT EXISTS log text NOT NULL DEFAULT '';
