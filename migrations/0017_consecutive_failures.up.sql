-- A task's consecutive unsuccessful runs (failed or timed out), counted by
-- every finish and reset by a success: the count a task's
-- PauseAfterFailures option compares with, whichever node ran the runs.
-- Not indexed, so a finish that keeps its claim stays a HOT update.
ALTER TABLE easyjob_tasks ADD COLUMN IF NOT EXISTS failures integer NOT NULL DEFAULT 0;
