package easyjob

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/node"
	"github.com/easyjob-go/easyjob/repository"
)

// fire is one run seen by a test job.
type fire struct {
	task      string
	scheduled time.Time
	node      int64
	started   time.Time
	attempt   int
}

// ledger records every run of test jobs, like the bench harness does.
type ledger struct {
	mu    sync.Mutex
	fires []fire
	subs  []chan fire
}

func (l *ledger) record(ctx context.Context) {
	info, _ := InfoFromContext(ctx)
	f := fire{task: info.Task, scheduled: info.ScheduledAt, node: info.NodeID, started: time.Now(), attempt: info.Attempt}
	l.mu.Lock()
	l.fires = append(l.fires, f)
	subs := l.subs
	l.mu.Unlock()
	for _, s := range subs {
		select {
		case s <- f:
		default:
		}
	}
}

// job returns a job that records its run and returns err.
func (l *ledger) job(err error) Func {
	return func(ctx context.Context) error {
		l.record(ctx)
		return err
	}
}

func (l *ledger) snapshot() []fire {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]fire(nil), l.fires...)
}

// count returns the runs of task.
func (l *ledger) count(task string) int {
	k := 0
	for _, f := range l.snapshot() {
		if f.task == task {
			k++
		}
	}
	return k
}

// duplicates lists (task, scheduled) pairs run more than once.
func (l *ledger) duplicates() []string {
	seen := map[string]int{}
	var dups []string
	for _, f := range l.snapshot() {
		k := fmt.Sprintf("%s@%s", f.task, f.scheduled.Format(time.RFC3339Nano))
		seen[k]++
		if seen[k] == 2 {
			dups = append(dups, k)
		}
	}
	return dups
}

// testNode is one Scheduler running in the test process.
type testNode struct {
	s      *Scheduler
	hooks  *node.Hooks
	cancel context.CancelFunc
	done   chan error
	node   chan *node.Node
	n      *node.Node
}

// fastConfig shrinks every interval so tests run in seconds.
func fastConfig(store repository.Store, group string) Config {
	return Config{
		Store: store, Group: group,
		HeartbeatInterval: 200 * time.Millisecond,
		RecoverInterval:   200 * time.Millisecond,
		PollInterval:      200 * time.Millisecond,
		FetchWindow:       2 * time.Second,
		ShutdownGrace:     5 * time.Second,
	}
}

// start runs a scheduler with cfg and the tasks reg registers; it stops
// at the end of the test.
func start(t *testing.T, cfg Config, reg func(s *Scheduler)) *testNode {
	t.Helper()
	tn := &testNode{hooks: &node.Hooks{}, done: make(chan error, 1), node: make(chan *node.Node, 1)}
	tn.hooks.HeartbeatWritten.Arm()
	tn.hooks.FireFinished.Arm()
	tn.hooks.RecoverScanned.Arm()
	cfg.hooks = tn.hooks
	tn.hooks.OnNode = func(n *node.Node) { tn.node <- n }
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tn.s = s
	reg(s)
	ctx, cancel := context.WithCancel(context.Background())
	tn.cancel = cancel
	go func() { tn.done <- s.Run(ctx) }()
	select {
	case tn.n = <-tn.node:
	case err := <-tn.done:
		t.Fatalf("Run returned early: %v", err)
	}
	t.Cleanup(func() { tn.stop(t) })
	return tn
}

// background is a Scheduler's Run on its own goroutine for one test: it
// is cancelled when the test ends, and Run must then return nil.
type background struct {
	ended chan struct{} // closed when Run returned
	err   error         // Run's result, once ended is closed
}

// runBackground runs s until the test ends.
func runBackground(t *testing.T, s *Scheduler) *background {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := &background{ended: make(chan struct{})}
	go func() { b.err = s.Run(ctx); close(b.ended) }()
	t.Cleanup(func() {
		cancel()
		<-b.ended
		if b.err != nil {
			t.Errorf("Run: %v", b.err)
		}
	})
	return b
}

// stop shuts the node down gracefully and waits for Run to return.
func (tn *testNode) stop(t *testing.T) {
	t.Helper()
	if tn.cancel == nil {
		return
	}
	tn.cancel()
	tn.cancel = nil
	select {
	case err := <-tn.done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancel")
	}
}

// crash stops every loop of the node without any clean-up: no release,
// no finish of queued claims, the node row stays.
func (tn *testNode) crash(t *testing.T) {
	tn.hooks.Crashed.Store(true)
	tn.stop(t)
}

// waitAllLive waits until every node's live view holds all of nodes.
func waitAllLive(t *testing.T, nodes []*testNode) {
	t.Helper()
	waitFor(t, 10*time.Second, "all nodes live everywhere", func() bool {
		for _, n := range nodes {
			if len(n.n.LiveView()) != len(nodes) {
				return false
			}
		}
		return true
	})
}

// waitSignal returns the first value s sends for which ok holds (values
// that do not hold are discarded), failing t after within. The buffer
// keeps the newest values only, so ok should pick the event wanted by its
// content (e.g. a time after the cause), not count on seeing every send.
func waitSignal[T any](t *testing.T, s *node.Signal[T], within time.Duration, what string, ok func(T) bool) T {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case v := <-s.C():
			if ok(v) {
				return v
			}
		case <-timeout:
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
	}
}

// beatAfter waits until the node has written a heartbeat sent after since.
func (tn *testNode) beatAfter(t *testing.T, since time.Time, within time.Duration) {
	t.Helper()
	waitSignal(t, &tn.hooks.HeartbeatWritten, within, fmt.Sprintf("a heartbeat of node %d after %s", tn.n.ID(), since.Format(time.TimeOnly)),
		func(sent time.Time) bool { return sent.After(since) })
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
