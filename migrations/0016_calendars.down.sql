DROP TABLE IF EXISTS easyjob_calendars;
