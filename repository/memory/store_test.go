package memory_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
	"github.com/easyjob-go/easyjob/repository/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) repository.Store {
		s := memory.New()
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	})
}

// fakeClock is a store clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A store clock an hour ahead of the process's clock decides due-ness,
// liveness and death; the caller's clock plays no part.
func TestSkewedClockDecides(t *testing.T) {
	const skew = time.Hour
	ctx := t.Context()
	s := memory.New(memory.WithClock(func() time.Time { return time.Now().Add(skew) }))

	now, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(now); d < skew-time.Minute || d > skew+time.Minute {
		t.Fatalf("store Now is %v ahead of time.Now, want about %v", d, skew)
	}

	local := time.Now()
	_, err = s.UpsertTasks(ctx, "g", []repository.TaskDef{
		{Name: "local-soon", Cron: "* * * * * *", NextStartTime: local.Add(2 * time.Second)},   // long overdue by the store clock
		{Name: "store-soon", Cron: "* * * * * *", NextStartTime: now.Add(2 * time.Second)},     // due in 2s by the store clock
		{Name: "store-later", Cron: "* * * * * *", NextStartTime: now.Add(30 * time.Minute)},   // not due
		{Name: "local-later", Cron: "* * * * * *", NextStartTime: local.Add(30 * time.Minute)}, // overdue by the store clock
	})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"local-soon", "store-soon", "store-later", "local-later"}
	due, err := s.DueTasks(ctx, repository.DueQuery{Group: "g", Handlers: names, Window: 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := dueNames(due); !slices.Equal(got, []string{"local-soon", "local-later"}) {
		t.Errorf("due with window 0 = %v, want the tasks overdue by the store clock", got)
	}
	if time.Until(due.Now) < skew-time.Minute {
		t.Errorf("Due.Now = %v: not the store clock", due.Now)
	}
	due, err = s.DueTasks(ctx, repository.DueQuery{Group: "g", Handlers: names, Window: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := dueNames(due); !slices.Equal(got, []string{"local-soon", "local-later", "store-soon"}) {
		t.Errorf("due with window 3s = %v", got)
	}

	// Heartbeats are stamped with the store clock.
	n, err := s.RegisterNode(ctx, "g", "n", 1)
	if err != nil {
		t.Fatal(err)
	}
	if time.Until(n.HeartbeatAt) < skew-time.Minute {
		t.Errorf("heartbeat_at %v is not the store clock", n.HeartbeatAt)
	}
	live, err := s.LiveNodes(ctx, "g", time.Minute)
	if err != nil || len(live) != 1 {
		t.Errorf("LiveNodes(1m) = %v, %v; want the node", live, err)
	}
}

// With a hand-driven clock, liveness, death and expiry follow it exactly.
func TestFakeClockLiveness(t *testing.T) {
	ctx := t.Context()
	clk := &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC)}
	s := memory.New(memory.WithClock(clk.Now))

	now, _ := s.Now(ctx)
	if !now.Equal(time.Date(2030, 1, 2, 3, 4, 5, 123456000, time.UTC)) {
		t.Errorf("Now = %v, want the clock truncated to microseconds", now)
	}
	a, _ := s.RegisterNode(ctx, "g", "a", 1)
	b, _ := s.RegisterNode(ctx, "g", "b", 1)
	ts, err := s.UpsertTasks(ctx, "g", []repository.TaskDef{{Name: "job", NextStartTime: now}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, a.ID, []repository.TaskRef{ts[0].Ref()}); err != nil {
		t.Fatal(err)
	}

	clk.Advance(3 * time.Second)
	if _, err := s.Heartbeat(ctx, b); err != nil {
		t.Fatal(err)
	}
	live, _ := s.LiveNodes(ctx, "g", 3*time.Second) // a heartbeated exactly 3s ago: still live (>=)
	if len(live) != 2 {
		t.Errorf("LiveNodes at exactly the threshold = %d nodes, want 2", len(live))
	}
	orphans, _ := s.Orphans(ctx, "g", 3*time.Second)
	if len(orphans) != 0 {
		t.Errorf("Orphans at exactly the threshold = %v, want none", orphans)
	}
	clk.Advance(time.Microsecond)
	live, _ = s.LiveNodes(ctx, "g", 3*time.Second)
	if len(live) != 1 || live[0].ID != b.ID {
		t.Errorf("LiveNodes past the threshold = %v, want only b", live)
	}
	orphans, _ = s.Orphans(ctx, "g", 3*time.Second)
	if len(orphans) != 1 || orphans[0].DeadNode != a.ID {
		t.Errorf("Orphans past the threshold = %v, want job of a", orphans)
	}
	if n, _ := s.ExpireNodes(ctx, "g", 3*time.Second); n != 0 {
		t.Errorf("ExpireNodes expired %d nodes, want 0 (a holds a claim)", n)
	}
	if errs, err := s.RecoverAll(ctx, []repository.Recovery{{Ref: orphans[0].Task.Ref(), DeadNode: a.ID}}); err != nil || errs[0] != nil {
		t.Fatal(err, errs)
	}
	if n, _ := s.ExpireNodes(ctx, "g", 3*time.Second); n != 1 {
		t.Errorf("ExpireNodes after recovery = %d, want 1", n)
	}
}

// Callers never share memory with the store.
func TestCopiesInAndOut(t *testing.T) {
	ctx := t.Context()
	s := memory.New()
	now, _ := s.Now(ctx)
	defs := []repository.TaskDef{{Name: "job", Cron: "c", NextStartTime: now}}
	ts, err := s.UpsertTasks(ctx, "g", defs)
	if err != nil {
		t.Fatal(err)
	}
	defs[0].Cron = "mutated"
	ts[0].Status = repository.TaskFinished
	ts[0].Version = 99
	got, _ := s.Task(ctx, "g", "job")
	if got.Cron != "c" || got.Status != repository.TaskPending || got.Version != 1 {
		t.Errorf("stored row changed through the caller's values: %+v", got)
	}
	all, _ := s.Tasks(ctx, "g")
	all[0].Name = "renamed"
	if _, err := s.Task(ctx, "g", "job"); err != nil {
		t.Errorf("stored row renamed through a returned slice: %v", err)
	}
	n, _ := s.RegisterNode(ctx, "g", "n", 1)
	nodes, _ := s.Nodes(ctx, "g")
	nodes[0].Weight = 42
	n.Counts = 7
	again, _ := s.Nodes(ctx, "g")
	if again[0].Weight != 1 || again[0].Counts != 0 {
		t.Errorf("stored node changed through the caller's values: %+v", again[0])
	}
}

func TestCalls(t *testing.T) {
	ctx := t.Context()
	s := memory.New()
	if s.Calls() != 0 {
		t.Fatalf("Calls of a new store = %d", s.Calls())
	}
	_, _ = s.Now(ctx)
	_, _ = s.Tasks(ctx, "g")
	_, _ = s.Claim(ctx, 1, nil) // no I/O
	_, _ = s.Finish(ctx, nil)   // no I/O
	_, _ = s.Release(ctx, nil)  // no I/O
	if got := s.Calls(); got != 2 {
		t.Errorf("Calls = %d, want 2", got)
	}
}

func TestDoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := memory.New()
	if _, err := s.Now(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Now with a done context: %v, want context.Canceled", err)
	}
	if _, err := s.RegisterNode(ctx, "g", "n", 1); !errors.Is(err, context.Canceled) {
		t.Errorf("RegisterNode with a done context: %v, want context.Canceled", err)
	}
	// Listen with a done context returns nil at once.
	if err := s.Listen(ctx, "g", func() { t.Error("woken") }); err != nil {
		t.Errorf("Listen = %v, want nil", err)
	}
}

func TestWeightValidated(t *testing.T) {
	s := memory.New()
	if _, err := s.RegisterNode(t.Context(), "g", "n", 0); err == nil {
		t.Error("RegisterNode with weight 0 succeeded; the schema requires weight >= 1")
	}
}

// Many goroutines listening, notifying and stopping: no leak (TestMain's
// goleak), no race.
func TestListenManyListeners(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s := memory.New()
	now, _ := s.Now(ctx)
	if _, err := s.UpsertTasks(ctx, "g", []repository.TaskDef{{Name: "job", NextStartTime: now}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	woke := make(chan struct{}, 100)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Listen(ctx, "g", func() {
				select {
				case woke <- struct{}{}:
				default:
				}
			}); err != nil {
				t.Errorf("Listen: %v", err)
			}
		}()
	}
	deadline := time.After(5 * time.Second)
	for got := 0; got < 10; {
		if _, err := s.Trigger(ctx, "g", "job", ""); err != nil {
			t.Fatal(err)
		}
		select {
		case <-woke:
			got++
		case <-deadline:
			t.Fatalf("only %d wakes", got)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	wg.Wait()
}

func dueNames(d repository.Due) []string {
	var out []string
	for _, t := range d.Tasks {
		out = append(out, t.Name)
	}
	return out
}
