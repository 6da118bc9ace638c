package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestCalendarCLI: set, list and remove a calendar; a schedule names it
// with --calendar; bad rules and unknown names exit with their statuses.
func TestCalendarCLI(t *testing.T) {
	c := &cli{t: t, bin: buildCLI(t), dsn: pgtest.NewDatabase(t)}
	c.run("migrate", "up").want(t, 0, "migrate up")
	g := func(args ...string) []string { return append(args, "--group", "cal") }
	r := c.run(g("calendar", "set", "fr", "--date", "2026-12-25", "--date", "2027-01-01", "--range", "2026-08-01..2026-08-15",
		"--cron", "* * * * 0,6", "--tz", "Europe/Paris", "--note", "closed")...).want(t, 0, "calendar set")
	if !strings.Contains(r.stdout, `set calendar "fr": dates 2026-12-25 2027-01-01, 2026-08-01..2026-08-15, cron * * * * 0,6 (Europe/Paris)`) {
		t.Errorf("calendar set said %q", r.stdout)
	}
	r = c.run(g("calendar", "list", "--json")...).want(t, 0, "calendar list")
	var cs []easyjob.ExclusionCalendar
	if err := json.Unmarshal([]byte(r.stdout), &cs); err != nil || len(cs) != 1 || cs[0].Name != "fr" || len(cs[0].Dates) != 2 || cs[0].Note != "closed" {
		t.Fatalf("calendar list --json = %v %+v", err, cs)
	}
	c.run(g("create", "s", "--handler", "h", "--cron", "0 0 9 * * *", "--allow-unknown", "--calendar", "fr")...).want(t, 0, "create --calendar")
	x := c.run(g("explain", "s", "--json")...).want(t, 0, "explain")
	var e easyjob.Explanation
	if err := json.Unmarshal([]byte(x.stdout), &e); err != nil || len(e.Next) != 10 {
		t.Fatalf("explain of a schedule with a calendar: %v %s", err, x.stdout)
	}
	for _, f := range e.Next {
		if wd := f.Weekday(); wd == 0 || wd == 6 {
			t.Errorf("explain lists a weekend fire %s the calendar excludes", f)
		}
	}
	c.run(g("create", "t", "--handler", "h", "--cron", "0 0 9 * * *", "--allow-unknown", "--calendar", "nope")...).want(t, exitNotFound, "create naming a missing calendar")
	c.run(g("calendar", "set", "bad", "--date", "25/12/2026")...).want(t, exitInvalid, "calendar set with a bad date")
	c.run(g("calendar", "set", "bad", "--range", "2026-08-01")...).want(t, exitUsage, "calendar set with a bad range")
	c.run(g("calendar", "remove", "fr")...).want(t, 0, "calendar remove")
	c.run(g("calendar", "remove", "fr")...).want(t, exitNotFound, "calendar remove twice")
	c.run(g("calendar", "frobnicate")...).want(t, exitUsage, "calendar with an unknown verb")
	r = c.run(g("audit", "--json")...).want(t, 0, "audit")
	if strings.Count(r.stdout, `"action": "calendar"`) != 2 {
		t.Errorf("audit log: want the set and the removal of the calendar\n%s", r.stdout)
	}
}
