package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestOpsNoDSN: without --dsn and EASYJOB_DSN an operator command is a
// usage error naming both, not a guess at a local server.
func TestOpsNoDSN(t *testing.T) {
	c := &cli{t: t, bin: buildCLI(t)}
	for _, args := range [][]string{{"status"}, {"tasks"}, {"migrate", "status"}, {"remove", "x"}} {
		r := c.run(args...).want(t, exitUsage, "no dsn: "+strings.Join(args, " "))
		if !strings.Contains(r.stderr, "--dsn") || !strings.Contains(r.stderr, "EASYJOB_DSN") {
			t.Errorf("%v: message does not name both ways: %s", args, r.stderr)
		}
	}
	// -h still works without a database.
	if r := c.run("tasks", "-h"); r.code != 0 || !strings.Contains(r.stderr, "EASYJOB_DSN") {
		t.Errorf("tasks -h: exit %d\n%s", r.code, r.stderr)
	}
}

// TestOpsLifecycleCLI: flags before the command, empty groups, overrides,
// stale tasks and remove, JSON ages, a schema newer than the binary.
func TestOpsLifecycleCLI(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	c := &cli{t: t, bin: buildCLI(t), dsn: dsn}
	c.run("migrate", "up").want(t, 0, "migrate up")
	store := pgtest.OpenStore(t, dsn)
	ctx := context.Background()

	t.Run("flags before the command", func(t *testing.T) {
		r := c.runEnv(nil, "--dsn", dsn, "--group", "nothing-here", "tasks").want(t, 0, "--dsn X tasks")
		if !strings.Contains(r.stdout, `no tasks in group "nothing-here"`) {
			t.Fatalf("tasks: %s", r.stdout)
		}
		c.runEnv(nil, "--json", "--dsn="+dsn, "nodes").want(t, 0, "--json --dsn=X nodes")
		if r := c.runEnv(nil, "--dsn", dsn); r.code != exitUsage || !strings.Contains(r.stderr, "usage:") {
			t.Errorf("flags and no command: exit %d\n%s", r.code, r.stderr)
		}
	})

	now, err := store.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.UpsertTasks(ctx, "cluster", []repository.TaskDef{
		{Name: "five", Cron: "*/5 * * * *", NextStartTime: now.Add(time.Minute)},
		{Name: "gone", Cron: "0 * * * * *", NextStartTime: now.Add(-time.Minute)},
		{Name: "gone-kid", Parent: "gone", NextStartTime: now},
	}); err != nil {
		t.Fatal(err)
	}
	// A live node that registers only "five" (its code no longer has "gone").
	set, err := store.PublishTaskSet(ctx, []string{"five"})
	if err != nil {
		t.Fatal(err)
	}
	node, err := store.RegisterNode(ctx, "cluster", "host:1", 1)
	if err != nil {
		t.Fatal(err)
	}
	beat := func() {
		t.Helper()
		if _, err := store.Heartbeat(ctx, repository.Node{ID: node.ID, Group: "cluster", Name: "host:1", Weight: 1, TaskSet: set}); err != nil {
			t.Fatal(err)
		}
	}
	beat()

	t.Run("empty group lists the groups", func(t *testing.T) {
		r := c.run("status", "--group", "default").want(t, 0, "status of the empty default group")
		if !strings.Contains(r.stdout, "groups in this database: cluster") {
			t.Fatalf("status of an empty group does not name the others:\n%s", r.stdout)
		}
	})

	t.Run("stale and override", func(t *testing.T) {
		beat()
		c.run("reschedule", "five", "0 0 * * *", "--group", "cluster").want(t, 0, "reschedule")
		r := c.run("tasks", "--group", "cluster").want(t, 0, "tasks")
		for _, s := range []string{"0 0 * * * (override; code: */5 * * * *)", "pending (stale)", "stale task(s)", "--reset"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("tasks lacks %q:\n%s", s, r.stdout)
			}
		}
		r = c.run("tasks", "--group", "cluster", "--json").want(t, 0, "tasks --json")
		var ts []easyjob.TaskInfo
		if err := json.Unmarshal([]byte(r.stdout), &ts); err != nil || len(ts) != 3 {
			t.Fatalf("tasks --json: %v\n%s", err, r.stdout)
		}
		if !ts[0].Overridden || ts[0].CodeCron != "*/5 * * * *" || ts[0].Stale || !ts[1].Stale || !ts[2].Stale {
			t.Errorf("tasks --json: %+v", ts)
		}
		r = c.run("reschedule", "five", "--reset", "--group", "cluster").want(t, 0, "reschedule --reset")
		if row, _ := store.Task(ctx, "cluster", "five"); row.Cron != "*/5 * * * *" || row.Overridden() {
			t.Fatalf("after --reset: cron %q overridden %v (%s)", row.Cron, row.Overridden(), r.stdout)
		}
		c.run("reschedule", "five", "--reset", "* * * * *", "--group", "cluster").want(t, exitUsage, "--reset with a cron")
		c.run("reschedule", "five", "--group", "cluster").want(t, exitUsage, "reschedule without a cron")
	})

	t.Run("remove", func(t *testing.T) {
		beat()
		r := c.run("remove", "five", "--group", "cluster").want(t, exitInUse, "remove a registered task")
		if !strings.Contains(r.stderr, "host:1") || !strings.Contains(r.stderr, "--force") {
			t.Errorf("refusal does not name the node and --force: %s", r.stderr)
		}
		c.run("remove", "ghost", "--group", "cluster").want(t, exitNotFound, "remove an unknown task")
		r = c.run("remove", "gone", "--group", "cluster").want(t, 0, "remove a stale task")
		if !strings.Contains(r.stdout, `removed "gone" and its children gone-kid`) {
			t.Errorf("remove said %q", r.stdout)
		}
		if _, err := store.Task(ctx, "cluster", "gone-kid"); err == nil {
			t.Error("the child is still there")
		}
		c.run("history", "gone", "--group", "cluster").want(t, exitNotFound, "history of a removed task without runs")
		c.run("remove", "five", "--group", "cluster", "--force", "--drop-history").want(t, 0, "remove --force")
		if ts, _ := store.Tasks(ctx, "cluster"); len(ts) != 0 {
			t.Errorf("tasks left: %+v", ts)
		}
	})

	t.Run("json ages carry units", func(t *testing.T) {
		beat()
		r := c.run("nodes", "--group", "cluster", "--json").want(t, 0, "nodes --json")
		var ns []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &ns); err != nil || len(ns) != 1 {
			t.Fatalf("nodes --json: %v\n%s", err, r.stdout)
		}
		if _, ok := ns[0]["heartbeat_age_seconds"]; !ok {
			t.Errorf("no heartbeat_age_seconds: %v", ns[0])
		}
		if _, ok := ns[0]["heartbeat_age"]; ok {
			t.Errorf("a unitless heartbeat_age: %v", ns[0])
		}
	})

	t.Run("migrate status of a newer schema", func(t *testing.T) {
		newer := postgres.LatestSchemaVersion() + 1
		if _, err := store.DB().ExecContext(ctx, `INSERT INTO easyjob_schema_migrations (version, applied_at) VALUES (?, now())`, newer); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_, _ = store.DB().ExecContext(ctx, `DELETE FROM easyjob_schema_migrations WHERE version = ?`, newer)
		}()
		r := c.run("migrate", "status").want(t, exitFailed, "migrate status, schema too new")
		if !strings.Contains(r.stdout, "newer than this binary") || !strings.Contains(r.stderr, "upgrade") {
			t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
		}
	})
}
