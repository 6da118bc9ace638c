package main

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestOpsAuditCLI: the actions of the CLI are in the audit log under the
// actor of --actor, else EASYJOB_ACTOR, else the OS user, via cli, from
// this host; audit lists, filters and pages them; history shows run kinds.
func TestOpsAuditCLI(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	c := &cli{t: t, bin: buildCLI(t), dsn: dsn}
	c.run("migrate", "up").want(t, 0, "migrate up")
	ctx := context.Background()
	store := seedTasks(t, dsn, func(now time.Time) []repository.TaskDef {
		return []repository.TaskDef{
			{Name: "report", Cron: "0 */5 * * * *", NextStartTime: now.Add(time.Minute)},
			{Name: "other", Cron: "0 0 * * * *", NextStartTime: now.Add(time.Hour)},
		}
	})
	host, _ := os.Hostname()

	// The actions, oldest first, as audit must list them newest first.
	type want struct{ name, action, task string }
	var wants []want
	act := func(env []string, w want, args ...string) {
		t.Helper()
		c.runEnv(env, append(args, "--dsn", dsn)...).want(t, 0, strings.Join(args, " "))
		wants = append([]want{w}, wants...)
	}
	t.Run("actions", func(t *testing.T) {
		act(nil, want{"bob", "pause", "report"}, "pause", "report", "--actor", "bob")
		// A global flag before the command, as with --dsn.
		act(nil, want{"bob", "trigger", "report"}, "--actor", "bob", "trigger", "report")
		act([]string{envActor + "=carol"}, want{"carol", "resume", "report"}, "resume", "report")
		// --actor wins over the environment.
		act([]string{envActor + "=carol"}, want{"bob", "reschedule", "other"}, "reschedule", "other", "0 30 * * * *", "--actor=bob")
		act(nil, want{osUserName(), "reset", "other"}, "reschedule", "other", "--reset")
	})

	audit := func(t *testing.T, args ...string) []easyjob.AuditEntry {
		t.Helper()
		r := c.run(append([]string{"audit", "--json"}, args...)...).want(t, 0, "audit --json "+strings.Join(args, " "))
		var es []easyjob.AuditEntry
		if err := json.Unmarshal([]byte(r.stdout), &es); err != nil {
			t.Fatalf("audit --json: %v\n%s", err, r.stdout)
		}
		return es
	}

	t.Run("audit --json", func(t *testing.T) {
		es := audit(t)
		if len(es) != len(wants) {
			t.Fatalf("audit --json: %d entries, want %d: %+v", len(es), len(wants), es)
		}
		for i, w := range wants {
			e := es[i]
			if e.Name != w.name || e.Via != "cli" || e.From != host || e.Action != w.action || e.Task != w.task ||
				e.Group != "default" || e.At.IsZero() {
				t.Errorf("entry %d: %+v, want %+v via cli from %q", i, e, w, host)
			}
			if i > 0 && e.ID >= es[i-1].ID {
				t.Errorf("entry %d: id %d not below %d: not newest first", i, e.ID, es[i-1].ID)
			}
		}
		// The JSON names of the fields, as scripts read them.
		r := c.run("audit", "--json", "--limit", "1").want(t, 0, "audit --json --limit 1")
		var raw []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil || len(raw) != 1 {
			t.Fatalf("audit --json: %v\n%s", err, r.stdout)
		}
		for _, k := range []string{"id", "group", "at", "name", "via", "from", "action", "task"} {
			if _, ok := raw[0][k]; !ok {
				t.Errorf("audit --json lacks %q: %v", k, raw[0])
			}
		}
	})

	t.Run("audit --task", func(t *testing.T) {
		es := audit(t, "--task", "other")
		if len(es) != 2 || es[0].Action != "reset" || es[1].Action != "reschedule" || es[1].Detail == "" {
			t.Fatalf("audit --task other: %+v", es)
		}
		if es := audit(t, "--task", "report"); len(es) != 3 {
			t.Fatalf("audit --task report: %+v", es)
		}
		if es := audit(t, "--task", "ghost"); len(es) != 0 {
			t.Fatalf("audit --task ghost: %+v", es)
		}
		r := c.run("audit", "--task", "ghost").want(t, 0, "audit --task ghost")
		if !strings.Contains(r.stdout, `no audit entries for task "ghost"`) {
			t.Errorf("audit of a task without entries said %q", r.stdout)
		}
	})

	t.Run("audit pages and --since", func(t *testing.T) {
		all := audit(t)
		r := c.run("audit", "--limit", "2").want(t, 0, "audit --limit 2")
		more := "more: --before " + strconv.FormatInt(all[1].ID, 10)
		if !strings.Contains(r.stdout, more) {
			t.Fatalf("audit --limit 2 lacks %q:\n%s", more, r.stdout)
		}
		next := audit(t, "--before", strconv.FormatInt(all[1].ID, 10), "--limit", "2")
		if len(next) != 2 || next[0].ID != all[2].ID || next[1].ID != all[3].ID {
			t.Fatalf("the next page: %+v, want ids %d, %d", next, all[2].ID, all[3].ID)
		}
		if es := audit(t, "--since", "1h"); len(es) != len(all) {
			t.Errorf("--since 1h: %d entries, want %d", len(es), len(all))
		}
		if es := audit(t, "--since", all[0].At.Add(time.Hour).Format(time.RFC3339)); len(es) != 0 {
			t.Errorf("--since an hour after the last entry: %+v", es)
		}
		if es := audit(t, "--since", all[len(all)-1].At.Format(time.RFC3339Nano)); len(es) != len(all) {
			t.Errorf("--since the first entry: %d entries, want %d", len(es), len(all))
		}
		for _, args := range [][]string{
			{"audit", "--since", "yesterday"}, {"audit", "--since", "-1h"}, {"audit", "--limit", "0"},
			{"audit", "--before", "-1"}, {"audit", "extra"},
		} {
			c.run(args...).want(t, exitUsage, strings.Join(args, " "))
		}
	})

	t.Run("audit table", func(t *testing.T) {
		all := audit(t)
		r := c.run("audit").want(t, 0, "audit")
		// AT is absolute (as --since takes it), then relative: "(now)", "(3m ago)".
		at := all[0].At.UTC().Format(time.RFC3339) + " ("
		for _, s := range []string{"ID", "AT", "ACTOR", "VIA", "FROM", "ACTION", "TASK", "DETAIL",
			"bob", "carol", "cli", "pause", "trigger", "report", at, "0 30 * * * *"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("audit lacks %q:\n%s", s, r.stdout)
			}
		}
		r = c.run("audit", "--group", "empty").want(t, 0, "audit of an empty group")
		if !strings.Contains(r.stdout, `no audit entries for group "empty"`) {
			t.Errorf("audit of an empty group said %q", r.stdout)
		}
	})

	t.Run("history kind", func(t *testing.T) {
		// A node runs the fire the CLI's trigger made due: a manual run.
		c.run("trigger", "report").want(t, 0, "trigger")
		node, err := store.RegisterNode(ctx, "default", "host:1", 1)
		if err != nil {
			t.Fatal(err)
		}
		row, err := store.Task(ctx, "default", "report")
		if err != nil {
			t.Fatal(err)
		}
		claimed, err := store.Claim(ctx, node.ID, []repository.TaskRef{row.Ref()})
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim: %v %+v", err, claimed)
		}
		x := repository.Execution{ScheduledAt: claimed[0].NextStartTime, Attempt: 1, Kind: repository.KindOf(claimed[0], "")}
		if _, err := store.StartExecution(ctx, claimed[0].Claim(), x); err != nil {
			t.Fatal(err)
		}
		r := c.run("history", "report", "--json").want(t, 0, "history --json")
		var raw []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil || len(raw) != 1 {
			t.Fatalf("history --json: %v\n%s", err, r.stdout)
		}
		if raw[0]["kind"] != string(easyjob.RunManual) {
			t.Errorf("history --json: kind %v, want manual: %v", raw[0]["kind"], raw[0])
		}
		r = c.run("history", "report").want(t, 0, "history")
		if !strings.Contains(r.stdout, "KIND") || !strings.Contains(r.stdout, "manual") {
			t.Errorf("history lacks the kind:\n%s", r.stdout)
		}
	})

	t.Run("bad actor", func(t *testing.T) {
		before := len(audit(t))
		for _, bad := range []struct {
			env  []string
			args []string
			what string
		}{
			{nil, []string{"pause", "report", "--actor", "bob\x1b[31m"}, "--actor"},
			{nil, []string{"pause", "report", "--actor", "bob\nroot"}, "--actor"},
			{nil, []string{"pause", "report", "--actor", " "}, "--actor"},
			{[]string{envActor + "=eve\rroot"}, []string{"pause", "report"}, envActor},
		} {
			r := c.runEnv(bad.env, append(bad.args, "--dsn", dsn)...).want(t, exitUsage, "bad actor "+strconv.Quote(strings.Join(bad.args, " ")))
			if !strings.Contains(r.stderr, "invalid "+bad.what) || !strings.Contains(r.stderr, "actor name") {
				t.Errorf("%q: message does not say what is wrong: %s", bad.args, r.stderr)
			}
		}
		if row, _ := store.Task(ctx, "default", "report"); row.Paused {
			t.Error("a refused pause paused the task")
		}
		if after := len(audit(t)); after != before {
			t.Errorf("refused actions were recorded: %d entries, were %d", after, before)
		}
	})
}

// TestCLIActor: --actor, else EASYJOB_ACTOR, else the OS user; a name
// given is validated.
func TestCLIActor(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == envActor {
				return v
			}
			return ""
		}
	}
	osUser := func() string { return "osuser" }
	for _, c := range []struct {
		flag    string
		flagSet bool
		env     string
		want    string // "" for a usage error
	}{
		{"bob", true, "carol", "bob"},
		{"", false, "carol", "carol"},
		{"", false, "", "osuser"},
		{" bob ", true, "", "bob"},
		{"Zoë Ølsen", true, "", "Zoë Ølsen"},
		{"", true, "carol", ""}, // an explicit empty --actor is a mistake, not "use the default"
		{"a\tb", true, "", ""},
		{"a\u0085b", true, "", ""}, // C1 control (NEL)
		{"\xff", true, "", ""},
		{strings.Repeat("x", maxActorLen+1), true, "", ""},
		{"", false, "x\x00", ""},
	} {
		a, err := cliActor(c.flag, c.flagSet, env(c.env), osUser)
		switch {
		case c.want == "" && exitCode(err) != exitUsage:
			t.Errorf("cliActor(%q, %v, env %q) = %+v, %v: want a usage error", c.flag, c.flagSet, c.env, a, err)
		case c.want != "" && (err != nil || a.Name != c.want || a.Via != "cli"):
			t.Errorf("cliActor(%q, %v, env %q) = %+v, %v: want %q via cli", c.flag, c.flagSet, c.env, a, err, c.want)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time // zero for a usage error
	}{
		{"90m", now.Add(-90 * time.Minute)},
		{"2026-01-01T00:00:00Z", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-01-01T01:00:00.5+01:00", time.Date(2026, 1, 1, 0, 0, 0, 5e8, time.UTC)},
		{"0s", time.Time{}},
		{"-1h", time.Time{}},
		{"2026-01-01", time.Time{}},
	} {
		got, err := parseSince("since", c.in, now)
		switch {
		case c.want.IsZero() && exitCode(err) != exitUsage:
			t.Errorf("parseSince(%q) = %v, %v: want a usage error", c.in, got, err)
		case !c.want.IsZero() && (err != nil || !got.Equal(c.want)):
			t.Errorf("parseSince(%q) = %v, %v: want %v", c.in, got, err, c.want)
		}
	}
}
