// Package metricstest runs real nodes on PostgreSQL for the observers'
// tests: fast configurations, nodes in the test process or in a child
// process that a test can kill, and the execution history counted.
package metricstest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// Config returns a node configuration on store for group with every
// interval shrunk so tests run in seconds.
func Config(store repository.Store, group string) easyjob.Config {
	return easyjob.Config{
		Store: store, Group: group, SkipMigrate: true,
		HeartbeatInterval: 200 * time.Millisecond,
		RecoverInterval:   200 * time.Millisecond,
		PollInterval:      200 * time.Millisecond,
		FetchWindow:       2 * time.Second,
		ShutdownGrace:     5 * time.Second,
	}
}

var groups struct {
	sync.Mutex
	n int
}

// Group returns a group name of t's own (distinct across -count runs).
func Group(t *testing.T) string {
	groups.Lock()
	defer groups.Unlock()
	groups.n++
	return fmt.Sprintf("%s_%d_%d", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), os.Getpid(), groups.n)
}

// Node is a Scheduler running in the test process.
type Node struct {
	S      *easyjob.Scheduler
	cancel context.CancelFunc
	done   chan error
}

// Start runs a Scheduler with cfg and the tasks reg registers until the
// test ends (or Stop), and waits until it is ready (Health).
func Start(ctx context.Context, t *testing.T, cfg easyjob.Config, reg func(*easyjob.Scheduler) error) *Node {
	t.Helper()
	s, err := easyjob.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg(s); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	n := &Node{S: s, cancel: cancel, done: make(chan error, 1)}
	go func() { n.done <- s.Run(ctx) }()
	t.Cleanup(func() { n.Stop(t) })
	Eventually(t, 10*time.Second, "node ready", func() bool {
		select {
		case err := <-n.done:
			t.Fatalf("Run returned early: %v", err)
		default:
		}
		return s.Health().Ready
	})
	return n
}

// Stop shuts the node down and waits for Run to return.
func (n *Node) Stop(t *testing.T) {
	t.Helper()
	if n.cancel == nil {
		return
	}
	n.cancel()
	n.cancel = nil
	select {
	case err := <-n.done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancel")
	}
}

// Eventually polls cond until it holds, failing t after within.
func Eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Client returns a control client on store for group, with cfg's
// liveness thresholds.
func Client(t *testing.T, cfg easyjob.Config) *easyjob.Client {
	t.Helper()
	c, err := easyjob.NewClient(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Key names a count of History: a task and a status or trigger.
type Key struct{ Task, Label string }

// History is the execution history of some tasks, counted. Skipped
// executions (fires skipped by a misfire policy: no job ran, so no fire
// was observed) are left out.
type History struct {
	ByStatus    map[Key]int          // task, status
	ByTrigger   map[Key]int          // task, trigger (as the runtime derives it)
	Runs        map[string]int       // task → executions
	Total       int                  // every execution counted
	LastSuccess map[string]time.Time // task → latest finish of a succeeded run
	Rows        []easyjob.ExecutionInfo
}

// ReadHistory counts the history of tasks.
func ReadHistory(t *testing.T, c *easyjob.Client, tasks ...string) History {
	t.Helper()
	h := History{ByStatus: map[Key]int{}, ByTrigger: map[Key]int{}, Runs: map[string]int{}, LastSuccess: map[string]time.Time{}}
	for _, task := range tasks {
		rows, err := c.History(t.Context(), task, easyjob.HistoryFilter{Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Status == repository.ExecSkipped {
				continue
			}
			h.Rows = append(h.Rows, r)
			h.Total++
			h.Runs[task]++
			h.ByStatus[Key{task, string(r.Status)}]++
			h.ByTrigger[Key{task, string(TriggerOf(r))}]++
			if r.Status == repository.ExecSucceeded && r.FinishedAt.After(h.LastSuccess[task]) {
				h.LastSuccess[task] = r.FinishedAt
			}
		}
	}
	return h
}

// TriggerOf derives an execution's trigger as the runtime does.
func TriggerOf(r easyjob.ExecutionInfo) observe.Trigger {
	if r.Kind != "" {
		return r.Kind
	}
	switch {
	case r.ParentExecutionID != 0:
		return observe.TriggerChain
	case r.Misfire != "":
		return observe.TriggerMisfire
	case r.Attempt > 1:
		return observe.TriggerRetry
	}
	return observe.TriggerCron
}

// RegisterTasks registers every-second tasks that succeed.
func RegisterTasks(s *easyjob.Scheduler, names ...string) error {
	for _, name := range names {
		if err := s.Register(name, "* * * * * *", func(context.Context) error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

// Environment of a child node process (see ChildMain).
const (
	envChildDSN   = "EASYJOB_METRICS_CHILD_DSN"
	envChildGroup = "EASYJOB_METRICS_CHILD_GROUP"
	envChildTasks = "EASYJOB_METRICS_CHILD_TASKS"
	envChildStrat = "EASYJOB_METRICS_CHILD_STRATEGY"
)

// ChildName is the node name of a child process.
const ChildName = "child"

// ChildMain runs a child node when the test binary was started by
// StartChild, and never returns then; otherwise it returns at once. Call
// it first in TestMain.
func ChildMain() {
	dsn := os.Getenv(envChildDSN)
	if dsn == "" {
		return
	}
	if err := runChild(dsn); err != nil {
		fmt.Fprintln(os.Stderr, "metricstest child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runChild(dsn string) error {
	ctx := context.Background()
	pg, err := postgres.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer pg.Close()
	cfg := Config(pg, os.Getenv(envChildGroup))
	cfg.NodeName = ChildName
	cfg.Strategy = os.Getenv(envChildStrat)
	s, err := easyjob.New(cfg)
	if err != nil {
		return err
	}
	if err := RegisterTasks(s, strings.Split(os.Getenv(envChildTasks), ",")...); err != nil {
		return err
	}
	return s.Run(ctx) // until killed
}

// StartChild starts this test binary as a node process on dsn's
// (migrated) database in group, with strategy and the tasks of
// RegisterTasks. It is killed when the test ends, if not before.
func StartChild(t *testing.T, dsn, group, strategy string, tasks ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChildDSN+"="+dsn, envChildGroup+"="+group,
		envChildTasks+"="+strings.Join(tasks, ","), envChildStrat+"="+strategy)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Kill(t, cmd) })
	return cmd
}

// Kill kills a child process with SIGKILL and reaps it.
func Kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if cmd.ProcessState != nil {
		return
	}
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill child: %v", err)
	}
	_ = cmd.Wait()
}

// NodeID returns the id of the node row named name, 0 if none.
func NodeID(t *testing.T, c *easyjob.Client, name string) int64 {
	t.Helper()
	nodes, err := c.Nodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Name == name {
			return n.ID
		}
	}
	return 0
}

// HeldBy counts the tasks claimed (doing) by node.
func HeldBy(t *testing.T, c *easyjob.Client, node int64) int {
	t.Helper()
	tasks, err := c.Tasks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for _, x := range tasks {
		if x.Status == repository.TaskDoing && x.NodeID == node {
			k++
		}
	}
	return k
}
