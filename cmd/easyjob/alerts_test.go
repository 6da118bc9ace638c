package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestAlertsCLI: add, list and remove runtime alert rules; a webhook's
// secret comes from the environment and is never shown, its URL only by
// scheme and host; invalid rules and unknown names exit with their
// statuses; history lists no alerts yet; the changes are audited.
func TestAlertsCLI(t *testing.T) {
	c := &cli{t: t, bin: buildCLI(t), dsn: pgtest.NewDatabase(t)}
	c.run("migrate", "up").want(t, 0, "migrate up")
	g := func(args ...string) []string { return append(args, "--group", "al") }
	c.run(g("alerts", "add", "--kind", "late", "--task", "report")...).want(t, exitInvalid, "a late rule without --after")
	c.run(g("alerts", "add", "--kind", "nope")...).want(t, exitInvalid, "an unknown kind")
	c.run(g("alerts", "add")...).want(t, exitUsage, "add without --kind")
	r := c.run(g("alerts", "add", "--kind", "late", "--task", "report", "--after", "30s")...).want(t, 0, "add late")
	if !strings.Contains(r.stdout, `added alert rule "late:report:30s": fires later than 30s of task report, to the nodes' notifiers`) {
		t.Errorf("add said %q", r.stdout)
	}
	r = c.runEnv([]string{"EASYJOB_WEBHOOK_SECRET=sup3rsecret"}, g("alerts", "add", "pager", "--kind", "consecutive_failures", "--count", "2",
		"--webhook", "https://hooks.example.com/T0K3N", "--dsn", c.dsn)...).want(t, 0, "add with a webhook")
	if strings.Contains(r.stdout, "T0K3N") || strings.Contains(r.stdout, "sup3rsecret") || !strings.Contains(r.stdout, "(signed)") {
		t.Errorf("add with a webhook said %q", r.stdout)
	}
	r = c.run(g("alerts", "list", "--json")...).want(t, 0, "list")
	if strings.Contains(r.stdout, "T0K3N") || strings.Contains(r.stdout, "sup3rsecret") {
		t.Errorf("list shows a secret: %s", r.stdout)
	}
	var rs []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rs); err != nil || len(rs) != 2 {
		t.Fatalf("list --json: %v %s", err, r.stdout)
	}
	if rs[0]["name"] != "late:report:30s" || rs[0]["after"] != "30s" || rs[1]["name"] != "pager" || rs[1]["signed"] != true ||
		rs[1]["count"] != float64(2) || rs[1]["webhook_url"] != "https://hooks.example.com/…" {
		t.Errorf("list --json: %s", r.stdout)
	}
	r = c.run(g("alerts", "list")...).want(t, 0, "list")
	if !strings.Contains(r.stdout, "pager") || !strings.Contains(r.stdout, "consecutive_failures") {
		t.Errorf("list: %s", r.stdout)
	}
	c.run(g("alerts", "remove", "late:report:30s")...).want(t, 0, "remove")
	c.run(g("alerts", "remove", "late:report:30s")...).want(t, exitNotFound, "remove twice")
	c.run(g("alerts", "frobnicate")...).want(t, exitUsage, "an unknown verb")
	r = c.run(g("alerts", "history", "--json")...).want(t, 0, "history")
	var hs []alert.Record
	if err := json.Unmarshal([]byte(r.stdout), &hs); err != nil || len(hs) != 0 {
		t.Fatalf("history --json: %v %s", err, r.stdout)
	}
	r = c.run(g("audit", "--json")...).want(t, 0, "audit")
	if strings.Count(r.stdout, `"action": "alert"`) != 3 || strings.Contains(r.stdout, "sup3rsecret") {
		t.Errorf("audit log: want the two puts and the removal of rules, no secret\n%s", r.stdout)
	}
}
