package dashboard

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// echoArgs are the arguments of the test nodes' handler kind "echo".
type echoArgs struct {
	N int `json:"n"`
}

// echoNode is a node running in the test process: it registers the
// handler kind "echo", which records the n of each run, and the code task
// "yearly".
type echoNode struct {
	mu   sync.Mutex
	seen []int
}

// startEchoNode runs an echoNode of group on store until the test ends
// (it is stopped, and waited for, before the store closes).
func startEchoNode(t *testing.T, store repository.Store, group string) *echoNode {
	t.Helper()
	s, err := easyjob.New(easyjob.Config{
		Store: store, Group: group, NodeName: "echo-node", SkipMigrate: true,
		HeartbeatInterval: 200 * time.Millisecond, PollInterval: 200 * time.Millisecond,
		RecoverInterval: 200 * time.Millisecond, FetchWindow: 2 * time.Second, ShutdownGrace: 5 * time.Second,
		Slog: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	n := &echoNode{}
	if err := s.Handle("echo", easyjob.HandlerOf(func(ctx context.Context, a echoArgs) error {
		easyjob.Logger(ctx).Info("echo", "n", a.N)
		n.mu.Lock()
		defer n.mu.Unlock()
		n.seen = append(n.seen, a.N)
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if err := s.Register("yearly", "0 0 0 1 1 *", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	runNode(t, s, "the echo node")
	return n
}

// runNode runs node s in this process until the test ends.
func runNode(t *testing.T, s *easyjob.Scheduler, what string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("%s did not stop", what)
		}
	})
}

// saw reports whether a run of echo had n.
func (n *echoNode) saw(v int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Contains(n.seen, v)
}

// waitUntil polls cond until it holds, failing t after 15 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not within 15s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitForEcho waits until c sees a live node that registers echo.
func waitForEcho(t *testing.T, c *easyjob.Client) {
	t.Helper()
	waitUntil(t, "a live node with the handler echo", func() bool {
		hs, err := c.Handlers(t.Context())
		if err != nil {
			return false
		}
		for _, h := range hs {
			if h.Kind == "echo" && h.Live {
				return true
			}
		}
		return false
	})
}
