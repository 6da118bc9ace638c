package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// echoArgs are the arguments of the test handler "echo".
type echoArgs struct {
	N int `json:"n"`
}

// echoRun is one run the handler saw.
type echoRun struct {
	task string
	n    int
}

// echoNode is an in-process node of group that registers the handler
// "echo" and the code task "tick"; it stops when the test ends.
type echoNode struct {
	mu   sync.Mutex
	runs []echoRun
}

func startEchoNode(t *testing.T, store repository.Store, group string) *echoNode {
	t.Helper()
	nop := zerolog.Nop()
	s, err := easyjob.New(easyjob.Config{Store: store, Group: group, SkipMigrate: true, Logger: &nop})
	if err != nil {
		t.Fatal(err)
	}
	n := &echoNode{}
	echo := func(ctx context.Context, a echoArgs) error {
		info, _ := easyjob.InfoFromContext(ctx)
		n.mu.Lock()
		n.runs = append(n.runs, echoRun{task: info.Task, n: a.N})
		n.mu.Unlock()
		return nil
	}
	if err := s.Handle("echo", easyjob.HandlerOf(echo)); err != nil {
		t.Fatal(err)
	}
	if err := s.Register("tick", "0 0 0 1 1 *", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	runScheduler(t, s)
	return n
}

// runScheduler runs s until the test ends, once it is ready.
func runScheduler(t *testing.T, s *easyjob.Scheduler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("node: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("node did not stop within a minute")
		}
	})
	waitFor(t, "the node to be ready", func() bool { return s.Health().Ready })
}

// saw reports whether the handler ran task with n.
func (n *echoNode) saw(task string, want int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, r := range n.runs {
		if r.task == task && r.n == want {
			return true
		}
	}
	return false
}

// waitFor polls cond until it holds, failing the test after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// echoGroup migrates a database of its own, starts an echo node of group
// on it and returns the CLI on that database, the node and a client of
// group.
func echoGroup(t *testing.T, group string) (*cli, *echoNode, *easyjob.Client) {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	c := &cli{t: t, bin: buildCLI(t), dsn: dsn}
	c.run("migrate", "up").want(t, 0, "migrate up")
	store := pgtest.OpenStore(t, dsn)
	node := startEchoNode(t, store, group)
	client, err := easyjob.NewClient(context.Background(), easyjob.Config{Store: store, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return c, node, client
}

// TestSchedulesCLI: create, trigger --args, history, update and remove a
// schedule created at runtime, run by a live node's handler; refusals
// write nothing.
func TestSchedulesCLI(t *testing.T) {
	const group = "dyn"
	c, node, client := echoGroup(t, group)
	ctx := context.Background()
	g := func(args ...string) []string { return append(args, "--group", group) }
	absent := func(t *testing.T, name string) {
		t.Helper()
		if _, err := client.Task(ctx, name); !errors.Is(err, easyjob.ErrTaskNotFound) {
			t.Fatalf("task %q: err %v, want ErrTaskNotFound (nothing written)", name, err)
		}
	}
	history := func(t *testing.T, name string) []easyjob.ExecutionInfo {
		t.Helper()
		r := c.run(g("history", name, "--json", "--limit", "1000")...).want(t, 0, "history --json")
		var xs []easyjob.ExecutionInfo
		if err := json.Unmarshal([]byte(r.stdout), &xs); err != nil {
			t.Fatalf("history --json: %v\n%s", err, r.stdout)
		}
		return xs
	}

	t.Run("create runs with the args", func(t *testing.T) {
		r := c.run(g("create", "e1", "--handler", "echo", "--cron", "* * * * * *", "--args", `{"n": 1}`)...).want(t, 0, "create")
		for _, s := range []string{`created schedule "e1"`, `args {"n":1}`, "HANDLER", "echo", "* * * * * *"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("create output lacks %q:\n%s", s, r.stdout)
			}
		}
		info, err := client.Task(ctx, "e1")
		if err != nil || !info.Dynamic || info.Handler != "echo" || argN(info.Args) != 1 {
			t.Fatalf("e1: %+v, %v", info, err)
		}
		waitFor(t, "a run of e1 with n=1", func() bool { return node.saw("e1", 1) })
	})

	t.Run("trigger --args", func(t *testing.T) {
		c.run(g("trigger", "e1", "--args", `{"n":"x"}`)...).want(t, exitInvalid, "trigger with args that do not decode")
		r := c.run(g("trigger", "e1", "--args", `{"n":2}`)...).want(t, 0, "trigger --args")
		if !strings.Contains(r.stdout, `triggered "e1"`) || !strings.Contains(r.stdout, `args {"n":2}`) {
			t.Errorf("trigger said %q", r.stdout)
		}
		waitFor(t, "a run of e1 with n=2", func() bool { return node.saw("e1", 2) })
	})

	t.Run("history shows args and kinds", func(t *testing.T) {
		var cron, manual bool
		waitFor(t, "history to record both runs", func() bool {
			cron, manual = false, false
			for _, x := range history(t, "e1") {
				switch {
				case x.Kind == easyjob.RunKind("cron") && argN(x.Args) == 1:
					cron = true
				case x.Kind == easyjob.RunKind("manual") && argN(x.Args) == 2:
					manual = true
				}
			}
			return cron && manual
		})
		r := c.run(g("history", "e1", "--limit", "1000")...).want(t, 0, "history")
		for _, s := range []string{"ARGS", `{"n":1}`, `{"n":2}`, "manual", "cron"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("history lacks %q:\n%s", s, r.stdout)
			}
		}
		r = c.run(g("history", "tick")...).want(t, 0, "history of a code task")
		if strings.Contains(r.stdout, "ARGS") {
			t.Errorf("ARGS column without arguments:\n%s", r.stdout)
		}
	})

	t.Run("tasks show the handler", func(t *testing.T) {
		r := c.run(g("tasks")...).want(t, 0, "tasks")
		for _, s := range []string{"HANDLER", "echo", "tick", "created at runtime"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("tasks lacks %q:\n%s", s, r.stdout)
			}
		}
	})

	t.Run("a one-off with --at", func(t *testing.T) {
		c.run(g("create", "once", "--handler", "echo", "--at", "1s", "--args", `{"n": 7}`)...).want(t, 0, "create --at")
		waitFor(t, "the one-off to run once and finish", func() bool {
			info, _ := client.Task(ctx, "once")
			return node.saw("once", 7) && info.Status == repository.TaskFinished
		})
		if xs := history(t, "once"); len(xs) != 1 {
			t.Errorf("a one-off ran %d times, want once", len(xs))
		}
		c.run(g("create", "late", "--handler", "echo", "--at", "2020-01-01T00:00:00Z")...).want(t, exitInvalid, "create --at in the past")
		c.run(g("create", "both", "--handler", "echo", "--at", "1m", "--cron", "* * * * *")...).want(t, exitUsage, "create with --at and --cron")
	})

	t.Run("refusals write nothing", func(t *testing.T) {
		r := c.run(g("create", "bad", "--handler", "echo", "--cron", "* * * * * *", "--args", `{"n":"x"}`)...).
			want(t, exitInvalid, "create with args that do not decode")
		if !strings.Contains(r.stderr, "args.n") || !strings.Contains(r.stderr, "integer") {
			t.Errorf("message does not name the field: %s", r.stderr)
		}
		absent(t, "bad")
		c.run(g("create", "bad", "--handler", "echo", "--cron", "* * * * * *", "--args", `{"n":1`)...).
			want(t, exitInvalid, "create with args that are not JSON")
		absent(t, "bad")
		r = c.run(g("create", "later", "--handler", "nope", "--cron", "* * * * * *")...).want(t, exitInvalid, "create with an unknown handler")
		if !strings.Contains(r.stderr, `"nope"`) || !strings.Contains(r.stderr, "--allow-unknown") {
			t.Errorf("unknown handler message: %s", r.stderr)
		}
		absent(t, "later")
		c.run(g("create", "bad", "--handler", "echo", "--cron", "not a cron")...).want(t, exitInvalid, "create with a bad cron")
		absent(t, "bad")
		c.run(g("create", "e1", "--handler", "echo", "--cron", "* * * * * *")...).want(t, exitExists, "create of a taken name")
		c.run(g("create", "tick", "--handler", "echo", "--cron", "* * * * * *")...).want(t, exitExists, "create of a code task's name")
		for _, args := range [][]string{
			{"create", "bad", "--cron", "* * * * * *"},
			{"create", "bad", "--handler", "echo"},
			{"create", "bad", "--handler", "echo", "--cron", "* * * * * *", "--misfire", "sometimes"},
			{"create", "bad", "--handler", "echo", "--cron", "* * * * * *", "--misfire", "catch_up:0"},
			{"create", "bad", "--handler", "echo", "--cron", "* * * * * *", "--retries", "-1"},
			{"create", "bad", "--handler", "echo", "--cron", "* * * * * *", "--tz", "Mars/Olympus"},
			{"create"},
		} {
			c.run(g(args...)...).want(t, exitUsage, strings.Join(args, " "))
			absent(t, "bad")
		}
	})

	t.Run("allow unknown and options", func(t *testing.T) {
		c.run(g("create", "later", "--handler", "nope", "--cron", "0 0 * * *", "--allow-unknown",
			"--paused", "--tz", "Europe/Paris", "--run-timeout", "5s", "--retries", "2", "--retry-backoff", "3s",
			"--misfire", "catch_up:3", "--misfire-after", "10s", "--skip-interrupted",
			"--start", "2030-01-01T00:00:00Z", "--end", "2031-01-01T00:00:00+01:00")...).want(t, 0, "create --allow-unknown")
		row, err := client.Control().Task(ctx, group, "later")
		if err != nil {
			t.Fatal(err)
		}
		o := row.Options
		if !row.Dynamic || row.Handler != "nope" || !row.Paused || o.Timezone != "Europe/Paris" || o.Timeout != 5*time.Second ||
			o.MaxRetries != 2 || o.RetryBackoff != 3*time.Second || o.Misfire != repository.MisfireCatchUp || o.CatchUpMax != 3 ||
			o.MisfireThreshold != 10*time.Second || o.Recover != repository.RecoverSkip ||
			!o.Start.Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) || !o.End.Equal(time.Date(2030, 12, 31, 23, 0, 0, 0, time.UTC)) ||
			!row.NextStartTime.Equal(time.Date(2030, 1, 1, 23, 0, 0, 0, time.UTC)) { // the first Paris midnight in the window
			t.Fatalf("later: %+v", row)
		}
		// An update keeps what it is not given.
		r := c.run(g("update", "later", "--cron", "0 12 * * *", "--allow-unknown", "--json")...).want(t, 0, "update --cron")
		var info easyjob.TaskInfo
		if err := json.Unmarshal([]byte(r.stdout), &info); err != nil || info.Cron != "0 12 * * *" || info.Revision != 2 {
			t.Fatalf("update --json: %v %+v", err, info)
		}
		row, err = client.Control().Task(ctx, group, "later")
		if err != nil {
			t.Fatal(err)
		}
		if row.Handler != "nope" || row.Options != o || !row.Paused {
			t.Fatalf("update lost the rest of the definition: %+v (was %+v)", row, o)
		}
		c.run(g("update", "later", "--cron", "0 13 * * *")...).want(t, exitInvalid, "update of an unknown handler")
		c.run(g("remove", "later")...).want(t, 0, "remove later")
	})

	t.Run("update changes args", func(t *testing.T) {
		c.run(g("update", "e1", "--args", `{"n":"y"}`)...).want(t, exitInvalid, "update with args that do not decode")
		if info, _ := client.Task(ctx, "e1"); argN(info.Args) != 1 || info.Revision != 1 {
			t.Fatalf("a refused update wrote: %+v", info)
		}
		r := c.run(g("update", "e1", "--args", `{"n":7}`)...).want(t, 0, "update --args")
		if !strings.Contains(r.stdout, `updated schedule "e1" (revision 2)`) {
			t.Errorf("update said %q", r.stdout)
		}
		info, err := client.Task(ctx, "e1")
		if err != nil || argN(info.Args) != 7 || info.Handler != "echo" || info.Cron != "* * * * * *" || info.Revision != 2 {
			t.Fatalf("after update: %+v, %v", info, err)
		}
		waitFor(t, "a run of e1 with n=7", func() bool { return node.saw("e1", 7) })
		c.run(g("update", "tick", "--handler", "echo", "--cron", "* * * * *")...).want(t, exitRefused, "update of a code task")
		c.run(g("update", "ghost", "--cron", "* * * * *")...).want(t, exitNotFound, "update of an unknown task")
	})

	t.Run("remove", func(t *testing.T) {
		r := c.run(g("remove", "e1")...).want(t, 0, "remove a schedule")
		if !strings.Contains(r.stdout, `removed "e1"`) {
			t.Errorf("remove said %q", r.stdout)
		}
		absent(t, "e1")
		if len(history(t, "e1")) == 0 {
			t.Error("remove dropped the history")
		}
		if r := c.run("remove", "-h"); !strings.Contains(r.stderr, "schedule") {
			t.Errorf("remove -h does not mention schedules:\n%s", r.stderr)
		}
	})
}

// argN is the n of JSON arguments {"n": N}; -1 when they are not.
func argN(raw json.RawMessage) int {
	var a struct{ N *int }
	if json.Unmarshal(raw, &a) != nil || a.N == nil {
		return -1
	}
	return *a.N
}
