package easyjob

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/node"
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
		// DeadAfter leaves room for the stagger below plus each node's
		// heartbeat retry backoff (up to 1 s) and the peers' own spread.
		HeartbeatInterval: 300 * time.Millisecond, LiveAfter: 600 * time.Millisecond, DeadAfter: 5 * time.Second,
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
	time.Sleep(6 * time.Second) // the outage itself: longer than DeadAfter
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
	assertEachSecondOnce(t, &l, names(30), back.Add(node.AbandonAfter), time.Now().Add(-time.Second))
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
// hold Run past ShutdownGrace + node.AbandonAfter; a peer recovers its task and
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
	if first.node == int64(b.n.ID()) {
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
	case <-time.After(cfg.ShutdownGrace + node.AbandonAfter + 5*time.Second):
		t.Fatal("Run did not return after the grace period: a job ignoring its context holds it")
	}
	waitFor(t, 10*time.Second, "the interrupted execution marked abandoned", func() bool {
		h, _ := c.History(context.Background(), "deaf", HistoryFilter{Status: repository.ExecAbandoned})
		return len(h) == 1
	})
	waitFor(t, 10*time.Second, "the peer firing the task", func() bool {
		for _, f := range l.snapshot() {
			if f.node == int64(b.n.ID()) {
				return true
			}
		}
		return false
	})
}

// TestMixedVersionsOnTime: during a rolling deploy, a task that only the
// new version registers is chosen among the nodes that can run it (nodes
// publish their task sets), so it fires on time from its first fire
// instead of waiting for the steal threshold whenever it hashes to an old
// node.
func TestMixedVersionsOnTime(t *testing.T) {
	store, group := pgStore(t)
	var l ledger
	cfg := fastConfig(store, group)
	cfg.Strategy = "id_hash"
	cfg.StealAfter = 3 * time.Second
	old := everySecond(t, &l, 10)
	newer := func(s *Scheduler) {
		old(s)
		for i := range 10 {
			mustRegister(t, s, fmt.Sprintf("new%02d", i), "* * * * * *", l.job(nil))
		}
	}
	nodes := []*testNode{start(t, cfg, old), start(t, cfg, newer)}
	waitAllLive(t, nodes)
	from := time.Now().Add(time.Second)
	waitFor(t, 15*time.Second, "five seconds of fires", func() bool { return time.Since(from) > 5*time.Second })
	late := 0
	for _, f := range l.snapshot() {
		if strings.HasPrefix(f.task, "new") && f.scheduled.After(from) && f.started.Sub(f.scheduled) > time.Second {
			late++
		}
	}
	if late > 0 {
		t.Fatalf("%d fires of tasks only the new node registers started more than 1 s late", late)
	}
	assertEachSecondOnce(t, &l, names(10), from, time.Now().Add(-time.Second))
}

// TestChainResumesAfterFailover: the node running a chain dies in its
// second step; the peer that recovers the fire resumes the chain from that
// step: the root and the first step, which completed, do not run again.
func TestChainResumesAfterFailover(t *testing.T) {
	store, group := pgStore(t)
	var l ledger
	running, cancelled, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	close(release)
	block := blockOnce(&l, running, cancelled, release)
	reg := func(s *Scheduler) {
		mustRegister(t, s, "root", "*/10 * * * * *", l.job(nil))
		mustRegister(t, s, "s1", "", l.job(nil), Parent("root"))
		mustRegister(t, s, "s2", "", block, Parent("s1"))
		mustRegister(t, s, "s3", "", l.job(nil), Parent("s2"))
	}
	cfg := Config{Store: store, Group: group, HeartbeatInterval: 300 * time.Millisecond, RecoverInterval: 300 * time.Millisecond}
	a, b := start(t, cfg, reg), start(t, cfg, reg)
	<-running
	victim := a
	if nodeOf(&l, "s2") == int64(b.n.ID()) {
		victim = b
	}
	var interrupted time.Time
	for _, f := range l.snapshot() {
		if f.task == "s2" {
			interrupted = f.scheduled
		}
	}
	victim.crash(t)
	runsAt := func(task string) int {
		k := 0
		for _, f := range l.snapshot() {
			if f.task == task && f.scheduled.Equal(interrupted) {
				k++
			}
		}
		return k
	}
	waitFor(t, 15*time.Second, "the last step of the interrupted fire", func() bool { return runsAt("s3") > 0 })
	for task, want := range map[string]int{"root": 1, "s1": 1, "s2": 2, "s3": 1} {
		if got := runsAt(task); got != want {
			t.Errorf("%s ran %d times for the interrupted fire, want %d", task, got, want)
		}
	}
}
