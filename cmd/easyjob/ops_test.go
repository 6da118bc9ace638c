package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// cli runs the built binary.
type cli struct {
	t   *testing.T
	bin string
	dsn string
}

type result struct {
	code           int
	stdout, stderr string
}

// run executes `easyjob args... --dsn <dsn>` with EASYJOB_DSN and
// EASYJOB_ACTOR unset.
func (c *cli) run(args ...string) result {
	c.t.Helper()
	if c.dsn != "" {
		args = append(args, "--dsn", c.dsn)
	}
	return c.runEnv(nil, args...)
}

func (c *cli) runEnv(env []string, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	// The caller's EASYJOB_ACTOR would change who the audit log records.
	cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), "EASYJOB_DSN"), envActor), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		c.t.Fatalf("run %v: %v", args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// want checks the exit status; a failure must print exactly one line.
func (r result) want(t *testing.T, code int, what string) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, r.code, code, r.stdout, r.stderr)
	}
	if code != 0 {
		if lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n"); len(lines) != 1 || lines[0] == "" {
			t.Fatalf("%s: stderr has %d lines, want one:\n%s", what, len(lines), r.stderr)
		}
		if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
			t.Fatalf("%s: stack in stderr:\n%s", what, r.stderr)
		}
	}
	return r
}

func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "easyjob")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestOpsCLI(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	c := &cli{t: t, bin: buildCLI(t), dsn: dsn}

	t.Run("not migrated", func(t *testing.T) {
		r := c.run("status").want(t, exitFailed, "status before migrate")
		if !strings.Contains(r.stderr, "migrate up") {
			t.Fatalf("no hint to migrate: %s", r.stderr)
		}
		c.run("migrate", "status").want(t, 0, "migrate status")
	})

	t.Run("migrate up", func(t *testing.T) {
		c.run("migrate", "up").want(t, 0, "migrate up")
		r := c.run("migrate", "status", "--json").want(t, 0, "migrate status")
		var st struct{ Version, Latest int }
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatalf("migrate status --json: %v\n%s", err, r.stdout)
		}
		if st.Version == 0 || st.Version != postgres.LatestSchemaVersion() {
			t.Fatalf("schema version %d, want %d", st.Version, postgres.LatestSchemaVersion())
		}
		if r := c.run("migrate", "status"); !strings.Contains(r.stdout, "up to date") {
			t.Fatalf("migrate status: %s", r.stdout)
		}
	})

	// Tasks as a deploy would write them, and a node that holds one.
	ctx := context.Background()
	store := seedTasks(t, dsn, func(now time.Time) []repository.TaskDef {
		return []repository.TaskDef{
			{Name: "report", Cron: "0 */5 * * * *", NextStartTime: now.Add(time.Minute)},
			{Name: "mail", Parent: "report", NextStartTime: now},
			{Name: "held", Cron: "0 0 0 1 1 *", NextStartTime: now.Add(time.Hour)},
		}
	})
	node, err := store.RegisterNode(ctx, "default", "host:42", 1)
	if err != nil {
		t.Fatal(err)
	}
	held, err := store.Task(ctx, "default", "held")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Claim(ctx, node.ID, []repository.TaskRef{held.Ref()}); err != nil {
		t.Fatal(err)
	}

	t.Run("tasks", func(t *testing.T) {
		r := c.run("tasks").want(t, 0, "tasks")
		for _, s := range []string{"NAME", "report", "mail", "0 */5 * * * *", "pending", "(after parent)", "in ", "doing"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("tasks output lacks %q:\n%s", s, r.stdout)
			}
		}
		r = c.run("tasks", "--json").want(t, 0, "tasks --json")
		var ts []easyjob.TaskInfo
		if err := json.Unmarshal([]byte(r.stdout), &ts); err != nil || len(ts) != 3 {
			t.Fatalf("tasks --json: %v, %d tasks\n%s", err, len(ts), r.stdout)
		}
		if ts[1].Name != "mail" || ts[1].Parent != "report" {
			t.Fatalf("tasks --json: %+v", ts)
		}
		if r := c.run("tasks", "--group", "other"); !strings.Contains(r.stdout, `no tasks in group "other"`) {
			t.Fatalf("tasks of an empty group: %s", r.stdout)
		}
	})

	t.Run("status and nodes", func(t *testing.T) {
		r := c.run("status").want(t, 0, "status")
		for _, s := range []string{"NODES", "TASKS", "host:42", "report", "held", "IN-FLIGHT"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("status output lacks %q:\n%s", s, r.stdout)
			}
		}
		r = c.run("nodes", "--json").want(t, 0, "nodes --json")
		var ns []easyjob.NodeInfo
		if err := json.Unmarshal([]byte(r.stdout), &ns); err != nil || len(ns) != 1 {
			t.Fatalf("nodes --json: %v\n%s", err, r.stdout)
		}
		if ns[0].Name != "host:42" || ns[0].InFlight != 1 {
			t.Fatalf("node %+v, want host:42 holding 1", ns[0])
		}
		r = c.run("status", "--json").want(t, 0, "status --json")
		var st struct {
			Group string
			Nodes []easyjob.NodeInfo
			Tasks []easyjob.TaskInfo
		}
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Group != "default" || len(st.Nodes) != 1 || len(st.Tasks) != 3 {
			t.Fatalf("status --json: %v %+v", err, st)
		}
	})

	t.Run("control", func(t *testing.T) {
		r := c.run("pause", "report").want(t, 0, "pause")
		if !strings.Contains(r.stdout, `paused "report"`) {
			t.Fatalf("pause said %q", r.stdout)
		}
		if row, _ := store.Task(ctx, "default", "report"); row.Status != repository.TaskPaused {
			t.Fatalf("after pause: %s", row.Status)
		}
		c.run("trigger", "report").want(t, 0, "trigger paused")
		if row, _ := store.Task(ctx, "default", "report"); row.Status != repository.TaskPending || !row.Paused {
			t.Fatalf("after trigger of a paused task: %s paused=%v", row.Status, row.Paused)
		}
		c.run("resume", "report").want(t, 0, "resume")
		if row, _ := store.Task(ctx, "default", "report"); row.Paused {
			t.Fatal("still paused after resume")
		}
		r = c.run("trigger", "held").want(t, 0, "trigger running")
		if !strings.Contains(r.stdout, "once more") {
			t.Fatalf("trigger of a doing task said %q", r.stdout)
		}
		r = c.run("reschedule", "report", "0 0 * * * *").want(t, 0, "reschedule")
		if row, _ := store.Task(ctx, "default", "report"); row.Cron != "0 0 * * * *" {
			t.Fatalf("cron after reschedule %q (%s)", row.Cron, r.stdout)
		}
		// Unquoted fields work too; flags may follow the arguments.
		c.run("reschedule", "report", "0", "15", "*", "*", "*", "*", "--json").want(t, 0, "reschedule unquoted")
		if row, _ := store.Task(ctx, "default", "report"); row.Cron != "0 15 * * * *" {
			t.Fatalf("cron after unquoted reschedule %q", row.Cron)
		}
	})

	t.Run("history", func(t *testing.T) {
		r := c.run("history", "report", "--limit", "5").want(t, 0, "history")
		if !strings.Contains(r.stdout, `no runs of "report"`) {
			t.Fatalf("history: %s", r.stdout)
		}
		x, err := store.StartExecution(ctx, held.Claim(), repository.Execution{ScheduledAt: held.NextStartTime, Attempt: 1})
		if err == nil {
			t.Fatalf("start with the pre-claim version must fail: %+v", x)
		}
		row, _ := store.Task(ctx, "default", "held")
		if _, err := store.StartExecution(ctx, row.Claim(), repository.Execution{ScheduledAt: row.NextStartTime, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
		r = c.run("history", "held").want(t, 0, "history held")
		for _, s := range []string{"STATUS", "running"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("history lacks %q:\n%s", s, r.stdout)
			}
		}
		r = c.run("history", "held", "--status", "running", "--json").want(t, 0, "history --json")
		var xs []easyjob.ExecutionInfo
		if err := json.Unmarshal([]byte(r.stdout), &xs); err != nil || len(xs) != 1 || xs[0].Task != "held" {
			t.Fatalf("history --json: %v %+v", err, xs)
		}
		c.run("history", "held", "--status", "weird").want(t, exitUsage, "bad --status")
	})

	t.Run("errors", func(t *testing.T) {
		for _, args := range [][]string{{"trigger", "ghost"}, {"pause", "ghost"}, {"resume", "ghost"},
			{"reschedule", "ghost", "* * * * *"}, {"history", "ghost"}} {
			r := c.run(args...).want(t, exitNotFound, strings.Join(args, " "))
			if !strings.Contains(r.stderr, `"ghost"`) {
				t.Errorf("%v: stderr does not name the task: %s", args, r.stderr)
			}
		}
		for _, cron := range []string{"not a cron", "61 * * * *", "0 0 30 2 *"} {
			r := c.run("reschedule", "report", cron).want(t, exitInvalid, "invalid cron "+cron)
			if !strings.Contains(r.stderr, "report") || !strings.Contains(r.stderr, "cron") {
				t.Errorf("invalid cron message: %s", r.stderr)
			}
		}
		for _, args := range [][]string{
			{"pause"}, {"trigger", "a", "b"}, {"reschedule", "report"}, {"history", "report", "--limit", "x"},
			{"history", "report", "--limit", "0"}, {"status", "--bogus"}, {"status", "extra"},
			{"migrate"}, {"migrate", "sideways"}, {"migrate", "down"}, {"tasks", "--group", ""},
		} {
			c.run(args...).want(t, exitUsage, strings.Join(args, " "))
		}
		if r := c.run("trigger", "-h"); r.code != 0 || !strings.Contains(r.stderr, "-group") {
			t.Errorf("trigger -h: exit %d\n%s", r.code, r.stderr)
		}
	})

	t.Run("migrate down", func(t *testing.T) {
		c.run("migrate", "down", "--yes", "--steps", "100").want(t, 0, "migrate down")
		if r := c.run("migrate", "status"); !strings.Contains(r.stdout, "schema version 0") {
			t.Fatalf("after down: %s", r.stdout)
		}
		c.run("migrate", "up").want(t, 0, "migrate up again")
	})
}

func TestOpsUnreachable(t *testing.T) {
	c := &cli{t: t, bin: buildCLI(t)}
	const secret = "s3cret-pw"
	for _, dsn := range []string{
		"postgres://scott:" + secret + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=5",
		"host=127.0.0.1 port=1 user=scott password=" + secret + " dbname=db sslmode=disable connect_timeout=5",
	} {
		for _, args := range [][]string{{"status"}, {"trigger", "report"}, {"migrate", "up"}} {
			r := c.run(append(args, "--dsn", dsn)...).want(t, exitFailed, "unreachable "+args[0])
			if strings.Contains(r.stderr+r.stdout, secret) {
				t.Fatalf("password leaked: %s", r.stderr)
			}
			if !strings.Contains(r.stderr, "127.0.0.1") {
				t.Errorf("message does not say which server: %s", r.stderr)
			}
		}
	}
	// The same through EASYJOB_DSN.
	r := c.runEnv([]string{"EASYJOB_DSN=postgres://scott:" + secret + "@127.0.0.1:1/db?sslmode=disable"}, "tasks").
		want(t, exitFailed, "unreachable EASYJOB_DSN")
	if strings.Contains(r.stderr, secret) {
		t.Fatalf("password leaked: %s", r.stderr)
	}
	// A malformed DSN is a usage error, still without the password.
	r = c.run("status", "--dsn", "postgres://scott:"+secret+"%zz@127.0.0.1/db").want(t, exitUsage, "bad dsn")
	if strings.Contains(r.stderr, secret) {
		t.Fatalf("password leaked: %s", r.stderr)
	}
}

func TestOpsRelTime(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "-"},
		{now, "now"},
		{now.Add(-3 * time.Second), "3s ago"},
		{now.Add(2 * time.Minute), "in 2m"},
		{now.Add(2*time.Minute + 5*time.Second), "in 2m5s"},
		{now.Add(-(3*time.Hour + 4*time.Minute + 5*time.Second)), "3h4m ago"},
		{now.Add(50 * time.Hour), "in 2d2h"},
		{now.Add(time.Hour - 200*time.Millisecond), "in 1h"},
		{now.Add(400 * time.Millisecond), "now"},
	} {
		if got := relTime(c.t, now); got != c.want {
			t.Errorf("relTime(%v) = %q, want %q", c.t.Sub(now), got, c.want)
		}
	}
	if got := shortDuration(250 * time.Millisecond); got != "250ms" {
		t.Errorf("250ms printed %q", got)
	}
}

func TestOpsParseArgs(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	limit := fs.Int("limit", 0, "")
	pos, err := parseArgs(fs, []string{"name", "--limit", "5", "more", "--", "--not-a-flag"})
	if err != nil || *limit != 5 || !reflect.DeepEqual(pos, []string{"name", "more", "--not-a-flag"}) {
		t.Fatalf("pos %q limit %d err %v", pos, *limit, err)
	}
}

func TestOpsScrubSecret(t *testing.T) {
	for _, c := range []struct{ msg, dsn string }{
		{"auth failed for hunter22 at postgres://u:hunter22@h/db", "postgres://u:hunter22@h/db"},
		{"bad password 'hunter 22'", "host=h password='hunter 22'"},
		{"x postgres://u:hunter22@h/db?password=hunter22", "postgres://u:hunter22@h/db?password=hunter22"},
	} {
		got := errorLine(errors.New(c.msg), c.dsn)
		if strings.Contains(got, "hunter") {
			t.Errorf("errorLine(%q) = %q: secret left", c.msg, got)
		}
	}
	if got := errorLine(errors.New("easyjob: a\n\tb\n\tb"), ""); got != "a b" {
		t.Errorf("one line: %q", got)
	}
}

// seedTasks writes the tasks defs returns (given the store's now) into
// group default of dsn, as a deploy would, and returns the store.
func seedTasks(t *testing.T, dsn string, defs func(now time.Time) []repository.TaskDef) *postgres.Store {
	t.Helper()
	store := pgtest.OpenStore(t, dsn)
	now, err := store.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.UpsertTasks(context.Background(), "default", defs(now)); err != nil {
		t.Fatal(err)
	}
	return store
}
