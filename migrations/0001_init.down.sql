DROP TABLE IF EXISTS easyjob_executions;
DROP TABLE IF EXISTS easyjob_tasks;
DROP TABLE IF EXISTS easyjob_nodes;
