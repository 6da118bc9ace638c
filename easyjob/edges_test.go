package easyjob

import (
	"context"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// TestOutageNoDoubleFire: the database is unreachable for longer than
// DeadAfter; the nodes reconnect in some order. A node that reconnects
// first must not judge a peer dead on the silence of the outage (it could
// not see the database itself) and re-run the fires that peer ran,
// unrecorded, during the outage.
func TestOutageNoDoubleFire(t *testing.T) {
	pg, group := pgStore(t)
	var l ledger
	cfg := Config{
		Group: group, Strategy: "id_hash",
		HeartbeatInterval: 300 * time.Millisecond, LiveAfter: 600 * time.Millisecond, DeadAfter: 3 * time.Second,
		RecoverInterval: 200 * time.Millisecond, PollInterval: 300 * time.Millisecond, FetchWindow: 2 * time.Second,
		ShutdownGrace: 5 * time.Second,
	}
	var stores []*outageStore
	var nodes []*testNode
	for range 3 {
		s := &outageStore{Store: pg}
		c := cfg
		c.Store = s
		stores = append(stores, s)
		nodes = append(nodes, start(t, c, everySecond(t, &l, 30)))
	}
	waitAllLive(t, nodes)
	waitFor(t, 10*time.Second, "every node firing", func() bool {
		seen := map[int64]bool{}
		for _, f := range l.snapshot() {
			seen[f.node] = true
		}
		return len(seen) == 3
	})

	for _, s := range stores {
		s.down.Store(true)
	}
	time.Sleep(5 * time.Second) // the outage itself: longer than DeadAfter
	stores[1].down.Store(false)
	stores[2].down.Store(false)
	ctx := context.Background()
	waitFor(t, 10*time.Second, "the first nodes back", func() bool {
		live, err := pg.LiveNodes(ctx, group, cfg.LiveAfter)
		return err == nil && len(live) == 2
	})
	time.Sleep(1500 * time.Millisecond) // the late node stays away this long: the stagger under test
	stores[0].down.Store(false)
	back := time.Now()
	waitFor(t, 10*time.Second, "the late node back", func() bool {
		live, err := pg.LiveNodes(ctx, group, cfg.LiveAfter)
		return err == nil && len(live) == 3
	})
	waitFor(t, 15*time.Second, "four seconds of fires after the outage", func() bool {
		return time.Since(back) > 4*time.Second
	})
	if d := l.duplicates(); len(d) > 0 {
		t.Fatalf("%d fires ran twice after the outage, e.g. %v", len(d), d[:min(5, len(d))])
	}
	assertEachSecondOnce(t, &l, names(30), back.Add(abandonAfter), time.Now().Add(-time.Second))
}

// TestTimeoutIgnoringContext: a job that ignores its context, overruns
// its timeout and returns nil is recorded timed_out, not succeeded.
func TestTimeoutIgnoringContext(t *testing.T) {
	store := memory.New()
	group := groupFor(t)
	start(t, fastConfig(store, group), func(s *Scheduler) {
		mustRegister(t, s, "stubborn", "* * * * * *", func(context.Context) error {
			time.Sleep(400 * time.Millisecond) // ignores ctx on purpose
			return nil
		}, Timeout(100*time.Millisecond))
	})
	c, err := NewClient(context.Background(), Config{Store: store, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	var h []ExecutionInfo
	waitFor(t, 5*time.Second, "a finished run", func() bool {
		h, _ = c.History(context.Background(), "stubborn", HistoryFilter{})
		for _, e := range h {
			if e.Status != repository.ExecRunning {
				return true
			}
		}
		return false
	})
	for _, e := range h {
		if e.Status == repository.ExecSucceeded {
			t.Fatalf("run past its timeout recorded %s, want %s", e.Status, repository.ExecTimedOut)
		}
	}
}

// TestShutdownBoundedByGrace: a job that ignores cancellation does not
// hold Run past ShutdownGrace + abandonAfter; a peer recovers its task and
// the interrupted execution is recorded abandoned.
func TestShutdownBoundedByGrace(t *testing.T) {
	store := memory.New()
	group := groupFor(t)
	running, unblock := make(chan struct{}, 1), make(chan struct{})
	t.Cleanup(func() { close(unblock) })
	var l ledger
	reg := func(s *Scheduler) {
		mustRegister(t, s, "deaf", "* * * * * *", func(ctx context.Context) error {
			l.record(ctx)
			select {
			case running <- struct{}{}:
				<-unblock // the first run ignores its context until the test ends
			default:
			}
			return nil
		})
	}
	cfg := fastConfig(store, group)
	cfg.ShutdownGrace = 300 * time.Millisecond
	a := start(t, cfg, reg)
	<-running
	first := l.snapshot()[0]
	victim := a
	b := start(t, cfg, reg)
	if first.node == int64(b.n.id()) {
		t.Fatal("the blocking run started on the second node")
	}
	c, err := NewClient(context.Background(), Config{Store: store, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the start recorded", func() bool {
		h, _ := c.History(context.Background(), "deaf", HistoryFilter{Status: repository.ExecRunning})
		return len(h) == 1
	})
	victim.cancel()
	victim.cancel = nil
	select {
	case err := <-victim.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(cfg.ShutdownGrace + abandonAfter + 5*time.Second):
		t.Fatal("Run did not return after the grace period: a job ignoring its context holds it")
	}
	waitFor(t, 10*time.Second, "the interrupted execution marked abandoned", func() bool {
		h, _ := c.History(context.Background(), "deaf", HistoryFilter{Status: repository.ExecAbandoned})
		return len(h) == 1
	})
	waitFor(t, 10*time.Second, "the peer firing the task", func() bool {
		for _, f := range l.snapshot() {
			if f.node == int64(b.n.id()) {
				return true
			}
		}
		return false
	})
}
