-- The operator's views of a group of a million tasks: a page and the
-- overview cost what they show, not what the group holds.
--
-- Pages walk the names in byte order (the order the in-memory store and
-- every client sort by, whatever the database's collation), from a
-- cursor: the unique (group_name, name) index has the database's
-- collation, so byte order needs its own index.
CREATE INDEX IF NOT EXISTS easyjob_tasks_name_bytes_idx ON easyjob_tasks (group_name, name COLLATE "C")
    WHERE status <> 'removed';

-- The overview counts the notable tasks (running, paused, finished,
-- failing, and the code-registered ones, whose staleness depends on the
-- live nodes) from their own small index, and the rest as the group's
-- total less those. A kept claim's finish changes none of the predicate's
-- columns, so the per-fire update stays HOT.
CREATE INDEX IF NOT EXISTS easyjob_tasks_notable_idx ON easyjob_tasks (group_name)
    WHERE status IN ('paused', 'finished') OR paused OR last_status IN ('failed', 'timed_out') OR NOT dynamic;

-- The group's total, kept as deltas: each statement that adds or removes
-- live (not 'removed') tasks appends one row; readers sum a group's rows
-- and fold them into one now and then. Appending takes no lock a
-- concurrent writer waits for, unlike one counter row per group.
CREATE TABLE IF NOT EXISTS easyjob_task_totals (
    id         bigserial PRIMARY KEY,
    group_name text      NOT NULL,
    delta      bigint    NOT NULL
);
CREATE INDEX IF NOT EXISTS easyjob_task_totals_group_idx ON easyjob_task_totals (group_name);

CREATE OR REPLACE FUNCTION easyjob_task_totals_insert() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO easyjob_task_totals (group_name, delta)
    SELECT group_name, count(*) FROM easyjob_new_tasks WHERE status <> 'removed' GROUP BY group_name;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS easyjob_task_totals_insert ON easyjob_tasks;
CREATE TRIGGER easyjob_task_totals_insert AFTER INSERT ON easyjob_tasks
    REFERENCING NEW TABLE AS easyjob_new_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION easyjob_task_totals_insert();

-- (The functions keep the search path of the migration: the table they
-- write is the one next to the task table, whoever's session fires them.)

-- Row triggers for the rare row that enters or leaves 'removed', or is
-- deleted: a statement trigger on UPDATE would collect every row of every
-- finish into a transition table.
CREATE OR REPLACE FUNCTION easyjob_task_totals_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO easyjob_task_totals (group_name, delta) VALUES (OLD.group_name, -1);
    ELSIF NEW.status = 'removed' THEN
        INSERT INTO easyjob_task_totals (group_name, delta) VALUES (NEW.group_name, -1);
    ELSE
        INSERT INTO easyjob_task_totals (group_name, delta) VALUES (NEW.group_name, 1);
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS easyjob_task_totals_update ON easyjob_tasks;
CREATE TRIGGER easyjob_task_totals_update AFTER UPDATE OF status ON easyjob_tasks
    FOR EACH ROW WHEN ((OLD.status = 'removed') IS DISTINCT FROM (NEW.status = 'removed'))
    EXECUTE FUNCTION easyjob_task_totals_change();
DROP TRIGGER IF EXISTS easyjob_task_totals_delete ON easyjob_tasks;
CREATE TRIGGER easyjob_task_totals_delete AFTER DELETE ON easyjob_tasks
    FOR EACH ROW WHEN (OLD.status <> 'removed')
    EXECUTE FUNCTION easyjob_task_totals_change();

-- The tasks written before: counted once, after the triggers exist (their
-- creation waits for writers in flight and holds new ones off until this
-- migration commits, so no row is counted twice or missed).
DELETE FROM easyjob_task_totals;
INSERT INTO easyjob_task_totals (group_name, delta)
SELECT group_name, count(*) FROM easyjob_tasks WHERE status <> 'removed' GROUP BY group_name;
