package easyjob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// broadcastRows returns every row of task's history (running ones too),
// oldest first.
func broadcastRows(t *testing.T, c *Client, task string) []ExecutionInfo {
	t.Helper()
	xs, err := c.History(context.Background(), task, HistoryFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]ExecutionInfo, 0, len(xs))
	for i := len(xs) - 1; i >= 0; i-- {
		out = append(out, xs[i])
	}
	return out
}

// byFire groups rows by fire time, each fire's rows by node; it fails t
// when one node has two rows of one fire.
func byFire(t *testing.T, xs []ExecutionInfo) map[time.Time]map[int64]ExecutionInfo {
	t.Helper()
	out := map[time.Time]map[int64]ExecutionInfo{}
	for _, x := range xs {
		k := x.ScheduledAt.UTC()
		if out[k] == nil {
			out[k] = map[int64]ExecutionInfo{}
		}
		if prev, dup := out[k][x.NodeID]; dup {
			t.Errorf("fire %s: node %d has two rows (%d %s, %d %s)", k.Format(time.RFC3339), x.NodeID, prev.ID, prev.Status, x.ID, x.Status)
		}
		out[k][x.NodeID] = x
	}
	return out
}

// dbNow reads the store's clock.
func dbNow(t *testing.T, c *Client) time.Time {
	t.Helper()
	now, err := c.store.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// waitDB polls the store's clock until it is past at.
func waitDB(t *testing.T, c *Client, at time.Time) {
	t.Helper()
	waitFor(t, time.Until(at)+10*time.Second, "the store's clock past "+at.Format(time.RFC3339Nano), func() bool {
		return dbNow(t, c).After(at)
	})
}

// broadcastNodes starts n nodes of one group on store, each registering
// task "all" (every second, Broadcast) with job; it returns the nodes and
// a client once all are live.
func broadcastNodes(t *testing.T, store repository.Store, group string, n int, job Func, opts ...Option) ([]*testNode, *Client) {
	t.Helper()
	var nodes []*testNode
	for range n {
		nodes = append(nodes, start(t, fastConfig(store, group), func(s *Scheduler) {
			if err := s.Register("all", "* * * * * *", job, append([]Option{Broadcast()}, opts...)...); err != nil {
				t.Fatal(err)
			}
		}))
	}
	return nodes, clusterClient(t, store, group, n)
}

// TestBroadcast: with 3 nodes, each fire of a broadcast task runs once on
// every node (one succeeded row per node, kind cron, none twice on a
// node, no claim on the row); a pause stops the fires on every node and a
// resume restarts them; a node started later runs only later fires.
func TestBroadcast(t *testing.T) {
	t.Parallel()
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, group := tc.store(t)
			var l ledger
			nodes, c := broadcastNodes(t, store, group, 3, l.job(nil))
			ids := map[int64]bool{}
			for _, n := range nodes {
				ids[int64(n.n.ID())] = true
			}
			allLive := dbNow(t, c)

			// Three whole fires after all were live, each on the 3 nodes.
			complete := func(after time.Time, nodes map[int64]bool) []time.Time {
				var fires []time.Time
				for fire, rows := range byFire(t, broadcastRows(t, c, "all")) {
					if !fire.After(after) {
						continue
					}
					ok := 0
					for id := range nodes {
						if x, ran := rows[id]; ran && x.Status == repository.ExecSucceeded {
							ok++
						}
					}
					if ok == len(nodes) {
						fires = append(fires, fire)
					}
				}
				return fires
			}
			waitFor(t, 20*time.Second, "3 fires run on every node", func() bool { return len(complete(allLive, ids)) >= 3 })
			for fire, rows := range byFire(t, broadcastRows(t, c, "all")) {
				for id, x := range rows {
					if !ids[id] {
						t.Errorf("fire %s: a row of node %d, not one of the cluster", fire.Format(time.RFC3339), id)
					}
					if x.Kind != RunCron || x.Attempt != 1 {
						t.Errorf("fire %s on node %d: kind %s, attempt %d; want cron, 1", fire.Format(time.RFC3339), id, x.Kind, x.Attempt)
					}
					if x.Status != repository.ExecSucceeded && x.Status != repository.ExecRunning {
						t.Errorf("fire %s on node %d: %s %q", fire.Format(time.RFC3339), id, x.Status, x.Error)
					}
					if x.Status == repository.ExecSucceeded && x.StartedAt.Sub(x.ScheduledAt) > 500*time.Millisecond {
						t.Errorf("fire %s on node %d started %v late", fire.Format(time.RFC3339), id, x.StartedAt.Sub(x.ScheduledAt))
					}
				}
			}
			perNode := map[string]int{} // the jobs' own count: no (node, fire) ran twice
			for _, f := range l.snapshot() {
				perNode[fmt.Sprintf("%d@%s", f.node, f.scheduled.Format(time.RFC3339Nano))]++
			}
			for k, v := range perNode {
				if v > 1 {
					t.Errorf("run %s ran %d times on its node", k, v)
				}
			}
			info, err := c.Task(ctx, "all")
			if err != nil {
				t.Fatal(err)
			}
			if !info.Broadcast || info.NodeID != 0 || info.Status != repository.TaskPending {
				t.Errorf("task: broadcast %v, node %d, status %s; want a broadcast row nobody claims", info.Broadcast, info.NodeID, info.Status)
			}

			// Pause: no fire after it, on any node; resume: fires again.
			if _, err := c.Pause(ctx, "all"); err != nil {
				t.Fatal(err)
			}
			paused := dbNow(t, c)
			waitDB(t, c, paused.Add(2500*time.Millisecond))
			for _, x := range broadcastRows(t, c, "all") {
				if x.ScheduledAt.After(paused) {
					t.Errorf("fire %s ran on node %d after the pause at %s", x.ScheduledAt.Format(time.RFC3339Nano), x.NodeID, paused.Format(time.RFC3339Nano))
				}
			}
			if _, err := c.Resume(ctx, "all"); err != nil {
				t.Fatal(err)
			}
			resumed := dbNow(t, c)
			waitFor(t, 20*time.Second, "fires on every node after the resume", func() bool { return len(complete(resumed, ids)) >= 2 })

			// A node started now runs only fires after its start.
			before := dbNow(t, c)
			late := start(t, fastConfig(store, group), func(s *Scheduler) {
				if err := s.Register("all", "* * * * * *", l.job(nil), Broadcast()); err != nil {
					t.Fatal(err)
				}
			})
			lateID := int64(late.n.ID())
			ids[lateID] = true
			waitFor(t, 20*time.Second, "fires on all 4 nodes", func() bool { return len(complete(before, ids)) >= 2 })
			for _, x := range broadcastRows(t, c, "all") {
				if x.NodeID == lateID && !x.ScheduledAt.After(before) {
					t.Errorf("the node started at %s ran the fire of %s", before.Format(time.RFC3339Nano), x.ScheduledAt.Format(time.RFC3339Nano))
				}
			}
			byFire(t, broadcastRows(t, c, "all"))
		})
	}
}

// TestBroadcastNodeDies: a node killed while its runs of a broadcast task
// go on leaves them running; a peer marks them abandoned (not run again)
// and the other nodes go on firing.
func TestBroadcastNodeDies(t *testing.T) {
	t.Parallel()
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, group := tc.store(t)
			job := func(ctx context.Context) error {
				select {
				case <-time.After(2500 * time.Millisecond):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			nodes, c := broadcastNodes(t, store, group, 3, job)
			victim := int64(nodes[2].n.ID())
			waitFor(t, 20*time.Second, "a run of the victim going on", func() bool {
				for _, x := range broadcastRows(t, c, "all") {
					if x.NodeID == victim && x.Status == repository.ExecRunning {
						return true
					}
				}
				return false
			})
			nodes[2].crash(t)
			crashed := dbNow(t, c)
			var abandoned []ExecutionInfo
			waitFor(t, 20*time.Second, "the victim's runs abandoned", func() bool {
				abandoned = abandoned[:0]
				for _, x := range broadcastRows(t, c, "all") {
					if x.NodeID != victim {
						continue
					}
					switch x.Status {
					case repository.ExecRunning:
						return false
					case repository.ExecAbandoned:
						abandoned = append(abandoned, x)
					}
				}
				return len(abandoned) > 0
			})
			for _, x := range abandoned {
				if x.FinishedAt.IsZero() || x.Error != repository.BroadcastAbandoned {
					t.Errorf("abandoned run %d: finished %v, error %q", x.ID, x.FinishedAt, x.Error)
				}
			}
			live := map[int64]bool{int64(nodes[0].n.ID()): true, int64(nodes[1].n.ID()): true}
			waitFor(t, 20*time.Second, "the others' fires after the kill", func() bool {
				k := 0
				for fire, rows := range byFire(t, broadcastRows(t, c, "all")) {
					if !fire.After(crashed) {
						continue
					}
					if _, ran := rows[victim]; ran {
						t.Fatalf("the killed node ran the fire of %s", fire.Format(time.RFC3339))
					}
					ok := 0
					for id := range live {
						if x, ran := rows[id]; ran && x.Status == repository.ExecSucceeded {
							ok++
						}
					}
					if ok == 2 {
						k++
					}
				}
				return k >= 2
			})
		})
	}
}

// TestBroadcastRefused: Broadcast with a chain, InTx, retries, an overlap
// policy, MaxFires, a calendar or catch-up misfires is refused at
// registration, naming the task; a trigger, a backfill and a runtime
// schedule are refused too.
func TestBroadcastRefused(t *testing.T) {
	nop := func(context.Context) error { return nil }
	for _, tc := range []struct {
		name string
		reg  func(s *Scheduler) error
	}{
		{"child", func(s *Scheduler) error {
			if err := s.Register("a", "* * * * * *", nop, Broadcast()); err != nil {
				return err
			}
			return s.Register("b", "", nop, Parent("a"))
		}},
		{"parent", func(s *Scheduler) error {
			if err := s.Register("p", "* * * * * *", nop); err != nil {
				return err
			}
			return s.Register("a", "", nop, Parent("p"), Broadcast())
		}},
		{"intx", func(s *Scheduler) error { return s.Register("a", "* * * * * *", nop, Broadcast(), InTx()) }},
		{"retry", func(s *Scheduler) error {
			return s.Register("a", "* * * * * *", nop, Broadcast(), Retry(2, time.Second))
		}},
		{"overlap", func(s *Scheduler) error {
			return s.Register("a", "* * * * * *", nop, Broadcast(), Overlap(OverlapSkip))
		}},
		{"allow_all", func(s *Scheduler) error {
			return s.Register("a", "* * * * * *", nop, Broadcast(), Overlap(OverlapAllowAll))
		}},
		{"max_fires", func(s *Scheduler) error { return s.Register("a", "* * * * * *", nop, Broadcast(), MaxFires(3)) }},
		{"calendar", func(s *Scheduler) error { return s.Register("a", "* * * * * *", nop, Broadcast(), Calendar("h")) }},
		{"catch_up", func(s *Scheduler) error {
			return s.Register("a", "* * * * * *", nop, Broadcast(), Misfire(CatchUp(3), 0))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			err = tc.reg(s)
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err = s.Run(ctx)
			}
			if !errors.Is(err, ErrInvalidOption) || (err != nil && !containsAll(err.Error(), "Broadcast", `"a"`)) {
				t.Fatalf("err = %v, want ErrInvalidOption naming task \"a\" and Broadcast", err)
			}
		})
	}

	t.Run("trigger", func(t *testing.T) {
		store := memory.New()
		start(t, fastConfig(store, "g"), func(s *Scheduler) {
			if err := s.Register("all", "@every 1h", nop, Broadcast()); err != nil {
				t.Fatal(err)
			}
		})
		c := clusterClient(t, store, "g", 1)
		ctx := context.Background()
		if _, err := c.Trigger(ctx, "all"); !errors.Is(err, ErrNotTriggerable) || !containsAll(err.Error(), "broadcast", "cron") {
			t.Errorf("Trigger = %v, want ErrNotTriggerable saying broadcast tasks run at their cron's fires", err)
		}
		now := dbNow(t, c)
		if _, err := c.Backfill(ctx, "all", now.Add(-3*time.Hour), now.Add(-time.Hour)); !errors.Is(err, ErrNotTriggerable) {
			t.Errorf("Backfill = %v, want ErrNotTriggerable", err)
		}
		if _, err := c.Create(ctx, Schedule{Name: "s", Handler: "h", Cron: "@every 1h", Options: []Option{Broadcast()}}, AllowUnknownHandler()); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("Create with Broadcast = %v, want ErrInvalidOption", err)
		}
	})
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
