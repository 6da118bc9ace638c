package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestVersionsCLI: versions lists the definitions a schedule took, newest
// first, with who made each change (--actor) and when; --json has them in
// full; a registered task has none before its first reschedule; an
// unknown name exits 3.
func TestVersionsCLI(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	c := &cli{t: t, bin: buildCLI(t), dsn: dsn}
	c.run("migrate", "up").want(t, 0, "migrate up")
	seedTasks(t, dsn, func(now time.Time) []repository.TaskDef {
		return []repository.TaskDef{{Name: "tick", Cron: "0 0 * * * *", NextStartTime: now.Add(time.Hour)}}
	})
	host, _ := os.Hostname()

	c.run("create", "mail", "--handler", "mailer", "--cron", "0 6 * * *", "--args", `{"to": "ops"}`,
		"--allow-unknown", "--actor", "alice").want(t, 0, "create")
	c.run("update", "mail", "--args", `{"to": "dev"}`, "--allow-unknown", "--actor", "bob").want(t, 0, "update --args")
	c.run("reschedule", "mail", "0 7 * * *", "--actor", "carol").want(t, 0, "reschedule")

	t.Run("table", func(t *testing.T) {
		r := c.run("versions", "mail").want(t, 0, "versions")
		lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
		if len(lines) != 4 {
			t.Fatalf("versions: %d lines, want a header and 3 versions:\n%s", len(lines), r.stdout)
		}
		for _, h := range []string{"REV", "CHANGED", "BY", "HANDLER", "CRON", "ARGS"} {
			if !strings.Contains(lines[0], h) {
				t.Errorf("header lacks %s: %q", h, lines[0])
			}
		}
		for i, want := range [][]string{
			{"3", "carol (cli from " + host + ")", "mailer", "0 7 * * *", `{"to":"dev"}`},
			{"2", "bob (cli", "0 6 * * *", `{"to":"dev"}`},
			{"1", "alice (cli", "0 6 * * *", `{"to":"ops"}`},
		} {
			line := lines[i+1]
			if !strings.HasPrefix(line, want[0]+" ") {
				t.Errorf("line %d = %q, want revision %s first (newest first)", i+1, line, want[0])
			}
			for _, s := range want[1:] {
				if !strings.Contains(line, s) {
					t.Errorf("line %d = %q lacks %q", i+1, line, s)
				}
			}
		}
	})

	t.Run("json", func(t *testing.T) {
		r := c.run("versions", "mail", "--json").want(t, 0, "versions --json")
		var vs []easyjob.Version
		if err := json.Unmarshal([]byte(r.stdout), &vs); err != nil {
			t.Fatalf("versions --json: %v\n%s", err, r.stdout)
		}
		if len(vs) != 3 || vs[0].Revision != 3 || vs[2].Revision != 1 || vs[2].ChangedBy.Name != "alice" ||
			vs[2].ChangedBy.Via != "cli" || vs[0].ChangedAt.IsZero() || vs[1].Handler != "mailer" {
			t.Fatalf("versions --json = %+v", vs)
		}
		var raw []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"revision", "handler", "cron", "args", "options", "changed_at", "changed_by"} {
			if _, ok := raw[0][k]; !ok {
				t.Errorf("versions --json: no %q in %v", k, raw[0])
			}
		}
	})

	t.Run("registered and unknown", func(t *testing.T) {
		r := c.run("versions", "tick").want(t, 0, "versions of a code task")
		if !strings.Contains(r.stdout, "no versions") {
			t.Errorf("versions of a code task said %q", r.stdout)
		}
		if r := c.run("versions", "tick", "--json").want(t, 0, "versions --json of a code task"); strings.TrimSpace(r.stdout) != "[]" {
			t.Errorf("versions --json of a code task = %q, want []", r.stdout)
		}
		c.run("reschedule", "tick", "0 30 * * * *", "--actor", "dave").want(t, 0, "reschedule a code task")
		r = c.run("versions", "tick").want(t, 0, "versions of a rescheduled code task")
		if !strings.Contains(r.stdout, "dave") || !strings.Contains(r.stdout, "0 30 * * * *") {
			t.Errorf("versions of a rescheduled code task:\n%s", r.stdout)
		}
		c.run("versions", "ghost").want(t, exitNotFound, "versions of an unknown task")
		c.run("versions").want(t, exitUsage, "versions without a name")
	})
}
