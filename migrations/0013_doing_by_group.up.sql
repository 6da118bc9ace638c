-- Recovery's query (Orphans): the doing tasks of a group, by node. With a
-- million runtime schedules in the group, the plan without this index
-- depended on fresh statistics: stale ones read every entry of the
-- group's name index on each pass (50-90 ms a call instead of ~1 ms).
CREATE INDEX IF NOT EXISTS easyjob_tasks_doing_group_idx ON easyjob_tasks (group_name, node_id) WHERE status = 'doing';
