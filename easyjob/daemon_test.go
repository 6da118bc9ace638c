package easyjob

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// daemonProbe is a daemon's function that runs until its context ends
// and reports each incarnation: where it started, how it ended, and the
// most incarnations ever running at once.
type daemonProbe struct {
	running, most atomic.Int32
	starts        chan int64 // node id of each incarnation's start
	ends          chan error // the context's cause at each end
}

func newDaemonProbe() *daemonProbe {
	return &daemonProbe{starts: make(chan int64, 64), ends: make(chan error, 64)}
}

func (p *daemonProbe) run(ctx context.Context) error {
	info, _ := InfoFromContext(ctx)
	n := p.running.Add(1)
	for {
		m := p.most.Load()
		if n <= m || p.most.CompareAndSwap(m, n) {
			break
		}
	}
	p.starts <- info.NodeID
	<-ctx.Done()
	p.running.Add(-1)
	p.ends <- context.Cause(ctx)
	return ctx.Err()
}

func (p *daemonProbe) started(t *testing.T, within time.Duration, what string) int64 {
	t.Helper()
	select {
	case id := <-p.starts:
		return id
	case <-time.After(within):
		t.Fatalf("no daemon start within %v: %s", within, what)
		return 0
	}
}

func (p *daemonProbe) ended(t *testing.T, within time.Duration, what string) error {
	t.Helper()
	select {
	case err := <-p.ends:
		return err
	case <-time.After(within):
		t.Fatalf("the daemon's run did not end within %v: %s", within, what)
		return nil
	}
}

// TestDaemon: a daemon runs on exactly one of three nodes at a time. A
// node cut off from the database cancels it before a peer starts it; a
// node that shuts down cancels it at once and a peer takes it over, the
// run recorded cancelled; a pause cancels it and a resume starts it
// again; every incarnation is a run in the history.
func TestDaemon(t *testing.T) {
	t.Parallel()
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, group := tc.store(t)
			p := newDaemonProbe()
			nodes := make(map[int64]*testNode)
			for range 3 {
				tn := start(t, fastConfig(store, group), func(s *Scheduler) {
					if err := s.Register("guard", "", p.run, Daemon()); err != nil {
						t.Fatal(err)
					}
				})
				nodes[int64(tn.n.ID())] = tn
			}
			c := clusterClient(t, store, group, 3)
			ctx := context.Background()

			first := p.started(t, 15*time.Second, "at first")
			cut := nodes[first]
			fail := func(context.Context) error { return errors.New("test: heartbeats cut") }
			cut.hooks.BeforeHeartbeat.Store(&fail)
			second := p.started(t, 15*time.Second, "after its node was cut off")
			if second == first {
				t.Fatalf("the daemon started again on node %d, the one cut off", first)
			}
			if err := p.ended(t, time.Second, "on the node cut off"); err == nil {
				t.Fatal("the cut-off node's daemon ended without a cause")
			}
			cut.hooks.BeforeHeartbeat.Store(nil)

			nodes[second].stop(t)
			if err := p.ended(t, 5*time.Second, "on the node stopping"); err == nil || !strings.Contains(err.Error(), "shutdown") {
				t.Fatalf("the stopping node's daemon ended with %v, want its shutdown", err)
			}
			third := p.started(t, 5*time.Second, "after its node shut down")
			if third == second {
				t.Fatalf("the daemon started again on node %d, which stopped", second)
			}
			waitFor(t, 10*time.Second, "the stopped run recorded cancelled", func() bool {
				for _, x := range runsOf(t, c, "guard") {
					if x.NodeID == second && x.Status == repository.ExecCancelled {
						return true
					}
				}
				return false
			})

			if _, err := c.Pause(ctx, "guard"); err != nil {
				t.Fatal(err)
			}
			if err := p.ended(t, 10*time.Second, "after the pause"); err == nil {
				t.Fatal("the paused daemon ended without a cause")
			}
			waitFor(t, 10*time.Second, "the daemon parked paused", func() bool {
				ti, err := c.Task(ctx, "guard")
				return err == nil && ti.Status == repository.TaskPaused && ti.Daemon
			})
			select {
			case id := <-p.starts:
				t.Fatalf("a paused daemon started on node %d", id)
			default:
			}
			if _, err := c.Resume(ctx, "guard"); err != nil {
				t.Fatal(err)
			}
			p.started(t, 10*time.Second, "after the resume")
			if m := p.most.Load(); m != 1 {
				t.Fatalf("%d runs of the daemon at once, want 1", m)
			}
			if n := len(runsOf(t, c, "guard")); n < 3 {
				t.Fatalf("%d ended runs in the history, want one per ended incarnation (3 or more)", n)
			}
		})
	}
}

// TestDaemonRestarts: a daemon that returns is started again a second
// later; one that fails waits longer after each failure in a row.
func TestDaemonRestarts(t *testing.T) {
	t.Parallel()
	store, group := bothStores[0].store(t)
	var mu sync.Mutex
	var at []time.Time
	start(t, fastConfig(store, group), func(s *Scheduler) {
		if err := s.Register("flaky", "", func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			at = append(at, time.Now())
			return errors.New("test: lost the stream")
		}, Daemon()); err != nil {
			t.Fatal(err)
		}
	})
	waitFor(t, 20*time.Second, "four runs", func() bool { mu.Lock(); defer mu.Unlock(); return len(at) >= 4 })
	mu.Lock()
	defer mu.Unlock()
	g1, g2, g3 := at[1].Sub(at[0]), at[2].Sub(at[1]), at[3].Sub(at[2])
	// 1s, 2s, 4s, each ±20%; the 2nd and 3rd at least 1.3× the one before.
	if g1 < 700*time.Millisecond || float64(g2) < 1.3*float64(g1) || float64(g3) < 1.3*float64(g2) {
		t.Fatalf("restarts after %v, %v, %v: want a backoff doubling from 1s", g1, g2, g3)
	}
}

// TestDaemonRefused: a daemon has no cron and runs alone.
func TestDaemonRefused(t *testing.T) {
	t.Parallel()
	nop := func(context.Context) error { return nil }
	for _, c := range []struct {
		name, cron string
		opts       []Option
		want       error
		says       string
	}{
		{"with a cron", "* * * * * *", []Option{Daemon()}, ErrInvalidCron, "has no cron"},
		{"with retries", "", []Option{Daemon(), Retry(2, time.Second)}, ErrInvalidOption, "Retry"},
		{"with an overlap policy", "", []Option{Daemon(), Overlap(OverlapSkip)}, ErrInvalidOption, "overlap policy"},
		{"with a misfire policy", "", []Option{Daemon(), Misfire(Skip(), time.Second)}, ErrInvalidOption, "misfire"},
		{"with MaxFires", "", []Option{Daemon(), MaxFires(3)}, ErrInvalidOption, "MaxFires"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			err = s.Register("d", c.cron, nop, c.opts...)
			if err == nil {
				err = s.Run(context.Background())
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err = %v, want %v saying %q", err, c.want, c.says)
			}
		})
	}
	s, _ := New(Config{})
	_ = s.Register("root", "* * * * * *", nop)
	_ = s.Register("step", "", nop, Parent("root"), Daemon())
	if err := s.Run(context.Background()); !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "chain") {
		t.Fatalf("a daemon chain step: %v", err)
	}
}
