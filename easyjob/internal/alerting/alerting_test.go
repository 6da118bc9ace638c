package alerting

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeStore is the memory store with the tasks and nodes a test sets.
type fakeStore struct {
	*memory.Store
	mu      sync.Mutex
	tasks   []repository.Task
	nodes   []repository.Node
	taskSet string // the task set of nodes 1 and 2; "": every task
}

func (f *fakeStore) Tasks(context.Context, string) ([]repository.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]repository.Task(nil), f.tasks...), nil
}

func (f *fakeStore) Nodes(context.Context, string) ([]repository.Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]repository.Node(nil), f.nodes...), nil
}

// LiveNodes: every node the test set, and nodes 1 and 2 (the services').
func (f *fakeStore) LiveNodes(ctx context.Context, group string, within time.Duration) ([]repository.Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []repository.Node{{ID: 1, TaskSet: f.taskSet}, {ID: 2, TaskSet: f.taskSet}}
	for _, n := range f.nodes {
		if time.Since(n.HeartbeatAt) < within && n.ID > 2 {
			out = append(out, n)
		}
	}
	return out, nil
}

func (f *fakeStore) set(tasks []repository.Task, nodes []repository.Node) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tasks, f.nodes = tasks, nodes
}

// fakeNode is a node of id that sees no live peers (it runs the group
// checks).
type fakeNode repository.NodeID

func (n fakeNode) ID() repository.NodeID { return repository.NodeID(n) }
func (fakeNode) Live() []repository.Node { return nil }
func (fakeNode) Now() time.Time          { return time.Now() }

// inbox counts the notifications a Func receives, by id and state.
type inbox struct {
	mu  sync.Mutex
	got map[string]int
	evs []alert.Event
}

func (b *inbox) notifier() alert.Notifier {
	return alert.Func(func(_ context.Context, e alert.Event) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.got == nil {
			b.got = map[string]int{}
		}
		b.got[fmt.Sprintf("%d-%s", e.ID, e.State)]++
		b.evs = append(b.evs, e)
		return nil
	})
}

func (b *inbox) count(kind alert.Kind, state alert.State) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := 0
	for _, e := range b.evs {
		if e.Kind == kind && e.State == state {
			k++
		}
	}
	return k
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runServices runs one service per node id on store until the test ends.
func runServices(t *testing.T, store Store, rules []alert.Rule, ns []alert.Notifier, ids ...repository.NodeID) []*Service {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var out []*Service
	for _, id := range ids {
		s := New(Config{Group: "g", Rules: rules, Notifiers: ns, Interval: 20 * time.Millisecond,
			LiveAfter: time.Second, DeadAfter: 2 * time.Second, Logger: testLogger(t)}, store)
		wg.Go(func() { s.Run(ctx, fakeNode(id)) })
		out = append(out, s)
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return out
}

func norm(t *testing.T, rs ...alert.Rule) []alert.Rule {
	t.Helper()
	for i, r := range rs {
		n, err := r.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		rs[i] = n
	}
	return rs
}

// TestOnceAcrossNodes: two nodes see failures of one task at once (each
// its own fires): one alert is delivered, counting both; a success seen
// by the node that did not deliver resolves it, and the owner delivers
// the resolved message, once.
func TestOnceAcrossNodes(t *testing.T) {
	store := &fakeStore{Store: memory.New()}
	var box inbox
	ss := runServices(t, store, norm(t, alert.Rule{Kind: alert.Failure, Task: "t"}), []alert.Notifier{box.notifier()}, 1, 2)
	at := time.Now().Truncate(time.Second)
	var wg sync.WaitGroup
	for i, s := range ss {
		wg.Go(func() {
			s.Finished(repository.Task{Name: "t", LastStatus: repository.ExecFailed, LastError: "boom", Failures: 1}, at.Add(time.Duration(i)*time.Second))
		})
	}
	wg.Wait()
	waitFor(t, "the failure delivered", func() bool { return box.count(alert.Failure, alert.Firing) == 1 })
	waitFor(t, "both failures counted", func() bool {
		xs, _ := store.AlertEvents(t.Context(), "g", repository.AlertFilter{})
		return len(xs) == 1 && xs[0].Count == 2
	})
	xs, _ := store.AlertEvents(t.Context(), "g", repository.AlertFilter{})
	other := ss[0]
	if xs[0].Owner == 1 {
		other = ss[1]
	}
	waitFor(t, "the other node knows the alert open", func() bool { return other.idx.Load().isOpen("failure:t", "t") })
	other.Finished(repository.Task{Name: "t", LastStatus: repository.ExecSucceeded}, at.Add(2*time.Second))
	waitFor(t, "the resolved message", func() bool { return box.count(alert.Failure, alert.Resolved) == 1 })
	waitFor(t, "nothing pending", func() bool {
		xs, _ := store.AlertEvents(t.Context(), "g", repository.AlertFilter{Live: true})
		return len(xs) == 0
	})
	box.mu.Lock()
	defer box.mu.Unlock()
	for k, n := range box.got {
		if n != 1 {
			t.Errorf("%s delivered %d times", k, n)
		}
	}
	if len(box.got) != 2 {
		t.Errorf("deliveries %v, want a firing and a resolved", box.got)
	}
}

// TestLateAndMissed: a fire started past the threshold fires Late, a
// misfire fires Missed; a fire on time resolves both; the fire path
// sends nothing for a task no rule watches.
func TestLateAndMissed(t *testing.T) {
	store := &fakeStore{Store: memory.New()}
	var box inbox
	ss := runServices(t, store, norm(t, alert.Rule{Kind: alert.Late, Task: "t", After: time.Second}, alert.Rule{Kind: alert.Missed}),
		[]alert.Notifier{box.notifier()}, 1)
	s := ss[0]
	at := time.Now().Truncate(time.Second)
	s.Started("t", at, 10*time.Millisecond, false) // on time, nothing open: not even sent
	s.Started("u", at, 5*time.Second, false)       // no late rule watches u
	if len(s.in) != 0 {
		t.Fatalf("%d observations sent for fires no alert is about", len(s.in))
	}
	s.Misfired("t", at, repository.MisfireFireOnceNow, 5*time.Second)
	s.Started("t", at, 5*time.Second, true)
	waitFor(t, "late and missed fired", func() bool {
		return box.count(alert.Late, alert.Firing) == 1 && box.count(alert.Missed, alert.Firing) == 1
	})
	s.Started("t", at.Add(time.Second), 10*time.Millisecond, false)
	waitFor(t, "late and missed resolved", func() bool {
		return box.count(alert.Late, alert.Resolved) == 1 && box.count(alert.Missed, alert.Resolved) == 1
	})
}

// TestGroupChecks: dead-man, dead nodes and missing handlers, checked
// from the group's rows, fire and resolve.
func TestGroupChecks(t *testing.T) {
	store := &fakeStore{Store: memory.New()}
	now := time.Now()
	old := now.Add(-time.Hour)
	store.set([]repository.Task{{Name: "t", Handler: "t", CreatedAt: old}}, // never ran
		[]repository.Node{{ID: 1, Name: "a", HeartbeatAt: now.Add(time.Hour)}, {ID: 5, Name: "e", HeartbeatAt: old}})
	publish := func(names ...string) {
		id, err := store.PublishTaskSet(t.Context(), repository.TaskSetEntries(map[string]string{names[0]: ""}))
		if err != nil {
			t.Fatal(err)
		}
		store.mu.Lock()
		store.taskSet = id
		store.mu.Unlock()
	}
	publish("other")
	var box inbox
	runServices(t, store, norm(t, alert.Rule{Kind: alert.Deadman, After: time.Minute}, alert.Rule{Kind: alert.NodeDied},
		alert.Rule{Kind: alert.NoHandler, Task: "t"}), []alert.Notifier{box.notifier()}, 1)
	waitFor(t, "dead-man, node and handler alerts", func() bool {
		return box.count(alert.Deadman, alert.Firing) == 1 && box.count(alert.NodeDied, alert.Firing) == 1 &&
			box.count(alert.NoHandler, alert.Firing) == 1
	})
	// t succeeds and a node that registers everything is live; node 5's
	// name comes back as node 6.
	future := now.Add(time.Hour)
	publish("t")
	store.set([]repository.Task{{Name: "t", Handler: "t", CreatedAt: old, LastStatus: repository.ExecSucceeded, LastFinishedAt: now}},
		[]repository.Node{{ID: 1, Name: "a", HeartbeatAt: future}, {ID: 5, Name: "e", HeartbeatAt: old}, {ID: 6, Name: "e", HeartbeatAt: future}})
	waitFor(t, "all resolved", func() bool {
		return box.count(alert.Deadman, alert.Resolved) == 1 && box.count(alert.NodeDied, alert.Resolved) == 1 &&
			box.count(alert.NoHandler, alert.Resolved) == 1
	})
}

// TestRuntimeRuleWebhookless: a rule stored at runtime is picked up by
// the next pass and delivered to the nodes' notifiers.
func TestRuntimeRule(t *testing.T) {
	store := &fakeStore{Store: memory.New()}
	var box inbox
	ss := runServices(t, store, nil, []alert.Notifier{box.notifier()}, 1)
	if _, err := store.PutAlertRule(t.Context(), repository.AlertRule{Group: "g", Name: "fails", Task: "t", Kind: alert.ConsecutiveFailures, Count: 2}); err != nil {
		t.Fatal(err)
	}
	s := ss[0]
	waitFor(t, "the rule read", func() bool { return len(s.idx.Load().rulesOf("t")) == 1 })
	at := time.Now().Truncate(time.Second)
	s.Finished(repository.Task{Name: "t", LastStatus: repository.ExecFailed, Failures: 1}, at)
	s.Finished(repository.Task{Name: "t", LastStatus: repository.ExecFailed, Failures: 2}, at.Add(time.Second))
	waitFor(t, "two failures in a row alerted", func() bool { return box.count(alert.ConsecutiveFailures, alert.Firing) == 1 })
	box.mu.Lock()
	defer box.mu.Unlock()
	if e := box.evs[0]; e.Rule != "fails" || e.Subject != "t" {
		t.Fatalf("event %+v", e)
	}
}

func testLogger(t *testing.T) zerolog.Logger { return zerolog.New(zerolog.NewTestWriter(t)) }

// TestPrune: the lowest live node deletes resolved, delivered alerts
// past Config.Retention, and keeps the open ones.
func TestPrune(t *testing.T) {
	store := &fakeStore{Store: memory.New()}
	ctx := t.Context()
	old, _, err := store.OpenAlert(ctx, repository.AlertEvent{Group: "g", Rule: "r", Kind: alert.Failure, Subject: "a", Key: "k", Owner: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.ResolveAlert(ctx, "g", "r", "a", "ok"); err != nil {
		t.Fatal(err)
	}
	for _, resolved := range []bool{false, true} {
		if _, err := store.MarkAlertDelivered(ctx, repository.AlertDelivery{ID: old.ID, Owner: 1, Resolved: resolved}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := store.OpenAlert(ctx, repository.AlertEvent{Group: "g", Rule: "r", Kind: alert.Failure, Subject: "b", Key: "k", Owner: 1}); err != nil {
		t.Fatal(err)
	}
	s := New(Config{Group: "g", Rules: norm(t, alert.Rule{Kind: alert.Failure}), Interval: 10 * time.Millisecond, Retention: time.Nanosecond,
		LiveAfter: time.Second, DeadAfter: 2 * time.Second, Logger: testLogger(t)}, store)
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(runCtx, fakeNode(1)) })
	defer func() { cancel(); wg.Wait() }()
	waitFor(t, "the resolved alert pruned", func() bool {
		xs, _ := store.AlertEvents(ctx, "g", repository.AlertFilter{})
		return len(xs) == 1 && xs[0].Subject == "b"
	})
}
