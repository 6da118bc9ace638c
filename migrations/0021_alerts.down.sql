DROP TABLE IF EXISTS easyjob_alert_events;
DROP TABLE IF EXISTS easyjob_alert_rules;
