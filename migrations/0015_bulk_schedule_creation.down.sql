ALTER TABLE easyjob_audit DROP CONSTRAINT IF EXISTS easyjob_audit_pkey;
ALTER TABLE easyjob_audit ADD CONSTRAINT easyjob_audit_pkey PRIMARY KEY (id);
CREATE INDEX IF NOT EXISTS easyjob_audit_group_idx ON easyjob_audit (group_name, id DESC);

DROP TRIGGER IF EXISTS easyjob_task_revisions_truncate ON easyjob_tasks;
DROP TRIGGER IF EXISTS easyjob_task_revisions_delete ON easyjob_tasks;
DROP FUNCTION IF EXISTS easyjob_task_revisions_cascade();
DELETE FROM easyjob_task_revisions r WHERE NOT EXISTS (SELECT 1 FROM easyjob_tasks t WHERE t.id = r.task_id);
ALTER TABLE easyjob_task_revisions DROP CONSTRAINT IF EXISTS easyjob_task_revisions_task_id_fkey;
ALTER TABLE easyjob_task_revisions ADD CONSTRAINT easyjob_task_revisions_task_id_fkey
    FOREIGN KEY (task_id) REFERENCES easyjob_tasks (id) ON DELETE CASCADE;

DROP TRIGGER IF EXISTS easyjob_tasks_due_at_insert ON easyjob_tasks;
CREATE TRIGGER easyjob_tasks_due_at_insert BEFORE INSERT ON easyjob_tasks
    FOR EACH ROW EXECUTE FUNCTION easyjob_tasks_due_at();
