-- Creating runtime schedules by the million: each created row writes a
-- task, its audit entry and its revision 1, and the per-row work the
-- schema added on top of those writes cost as much as the writes.

-- The insert trigger of 0008 ran a plpgsql function for every new task
-- row just to copy next_start_time into due_at. A writer that sets due_at
-- itself (CreateSchedules does) now skips the call; every other writer
-- still gets due_at filled in, as before.
DROP TRIGGER IF EXISTS easyjob_tasks_due_at_insert ON easyjob_tasks;
CREATE TRIGGER easyjob_tasks_due_at_insert BEFORE INSERT ON easyjob_tasks
    FOR EACH ROW WHEN (NEW.due_at IS DISTINCT FROM NEW.next_start_time)
    EXECUTE FUNCTION easyjob_tasks_due_at();

-- The revisions' foreign key checked every inserted revision with a
-- query of its own that also locked (and WAL-logged a lock on) the task
-- row the same statement had just written: about 15% of the server's
-- time in a bulk creation. Revisions are only ever written from the task
-- rows their statement writes, so the check guarded nothing; what the key
-- also did, delete a task's revisions with it, is kept by one statement
-- per DELETE or TRUNCATE of tasks.
ALTER TABLE easyjob_task_revisions DROP CONSTRAINT IF EXISTS easyjob_task_revisions_task_id_fkey;

-- (A TRUNCATE of the tasks empties the revisions with DELETE: TRUNCATE
-- would fail when the same statement names the revisions too.)
CREATE OR REPLACE FUNCTION easyjob_task_revisions_cascade() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM easyjob_task_revisions;
    ELSE
        DELETE FROM easyjob_task_revisions r USING easyjob_gone_tasks g WHERE r.task_id = g.id;
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS easyjob_task_revisions_delete ON easyjob_tasks;
CREATE TRIGGER easyjob_task_revisions_delete AFTER DELETE ON easyjob_tasks
    REFERENCING OLD TABLE AS easyjob_gone_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION easyjob_task_revisions_cascade();
DROP TRIGGER IF EXISTS easyjob_task_revisions_truncate ON easyjob_tasks;
CREATE TRIGGER easyjob_task_revisions_truncate AFTER TRUNCATE ON easyjob_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION easyjob_task_revisions_cascade();

-- The audit log is read by group only, newest first, paged by id within
-- the group. Its key on id alone was an index every entry wrote and no
-- read used, and its group index ran ids in descending order, so each
-- new entry went to the left end of the group's range and split pages
-- half full (2.5 times the size, and half a page logged per split). One
-- index now does both: the key (group_name, id), read backwards.
ALTER TABLE easyjob_audit DROP CONSTRAINT IF EXISTS easyjob_audit_pkey;
ALTER TABLE easyjob_audit ADD CONSTRAINT easyjob_audit_pkey PRIMARY KEY (group_name, id);
DROP INDEX IF EXISTS easyjob_audit_group_idx;
