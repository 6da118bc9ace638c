package easyjob

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// receiver is a webhook endpoint that checks each request's signature
// and counts the deliveries it accepted, by X-Easyjob-Delivery.
type receiver struct {
	t      *testing.T
	secret string
	down   atomic.Bool // answer 503
	mu     sync.Mutex
	got    map[string]int // delivery -> times accepted
	events []alert.Event
	bad    int // requests with a bad signature
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if rc.down.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !alert.Verify(rc.secret, body, r.Header.Get(alert.SignatureHeader)) {
		rc.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var e alert.Event
	if err := json.Unmarshal(body, &e); err != nil {
		rc.t.Errorf("webhook body %q: %v", body, err)
	}
	rc.got[r.Header.Get(alert.DeliveryHeader)]++
	rc.events = append(rc.events, e)
	w.WriteHeader(http.StatusNoContent)
}

// delivered returns the events of kind accepted in state.
func (rc *receiver) delivered(kind alert.Kind, state alert.State) []alert.Event {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []alert.Event
	for _, e := range rc.events {
		if e.Kind == kind && e.State == state {
			out = append(out, e)
		}
	}
	return out
}

// TestAlertsOnceUnderNodeKills: three nodes watch a failing task and the
// group's nodes. The webhook is down when the failure alert fires; the
// node that recorded it is killed before it could deliver, and a peer
// takes the delivery over. Every alert (the failure streak, the killed
// node's death) reaches the receiver exactly once, signed, and so does
// its resolved message (the task succeeds again; a node of the killed
// one's name starts).
func TestAlertsOnceUnderNodeKills(t *testing.T) {
	store, group := pgStore(t)
	rc := &receiver{t: t, secret: "s3cret", got: map[string]int{}}
	rc.down.Store(true)
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	hook := &alert.Webhook{URL: srv.URL, Secret: rc.secret, Retries: -1, Timeout: 2 * time.Second}

	var failing atomic.Bool
	failing.Store(true)
	flaky := func(ctx context.Context) error {
		if failing.Load() {
			return errors.New("boom")
		}
		return nil
	}
	cfgFor := func(name string) Config {
		cfg := fastConfig(store, group)
		cfg.NodeName = name
		cfg.AlertInterval = 100 * time.Millisecond
		cfg.Alerts = []alert.Rule{{Kind: alert.Failure, Task: "flaky"}, {Kind: alert.NodeDied}}
		cfg.AlertNotifiers = []alert.Notifier{hook}
		return cfg
	}
	reg := func(s *Scheduler) {
		if err := s.Register("flaky", "* * * * * *", flaky); err != nil {
			t.Fatal(err)
		}
	}
	nodes := map[repository.NodeID]*testNode{}
	names := map[repository.NodeID]string{}
	var all []*testNode
	for _, name := range []string{"a", "b", "c"} {
		tn := start(t, cfgFor(name), reg)
		nodes[tn.n.ID()], names[tn.n.ID()] = tn, name
		all = append(all, tn)
	}
	waitAllLive(t, all)

	ctx := context.Background()
	events := func() []repository.AlertEvent {
		xs, err := store.AlertEvents(ctx, group, repository.AlertFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return xs
	}
	find := func(kind alert.Kind) (repository.AlertEvent, bool) {
		for _, e := range events() {
			if e.Kind == kind {
				return e, true
			}
		}
		return repository.AlertEvent{}, false
	}

	// The failure alert fires; its delivery fails (the webhook is down).
	var failure repository.AlertEvent
	waitFor(t, 15*time.Second, "a failure alert whose delivery failed", func() bool {
		e, ok := find(alert.Failure)
		failure = e
		return ok && e.Attempts > 0
	})
	owner := failure.Owner
	killed := nodes[owner]
	if killed == nil {
		t.Fatalf("the failure alert's owner %d is none of the test's nodes", owner)
	}
	killed.crash(t)
	rc.down.Store(false)

	// A peer takes the delivery over; the killed node's death is alerted.
	waitFor(t, 15*time.Second, "the failure alert delivered by a peer", func() bool {
		return len(rc.delivered(alert.Failure, alert.Firing)) > 0
	})
	if e, _ := find(alert.Failure); e.Owner == owner {
		t.Fatalf("the failure alert was delivered, its owner is still the killed node %d", owner)
	}
	waitFor(t, 15*time.Second, "the node_died alert delivered", func() bool {
		return len(rc.delivered(alert.NodeDied, alert.Firing)) > 0
	})
	if d := rc.delivered(alert.NodeDied, alert.Firing); d[0].Subject != "node "+strconv.FormatInt(int64(owner), 10) {
		t.Fatalf("node_died alert about %q, want node %d", d[0].Subject, owner)
	}

	// The task succeeds again after more failures (counted in the same
	// alert); the killed node's name comes back.
	waitFor(t, 15*time.Second, "a second failure counted in the alert", func() bool {
		e, _ := find(alert.Failure)
		return e.Count >= 2
	})
	failing.Store(false)
	waitFor(t, 15*time.Second, "the failure alert resolved", func() bool {
		return len(rc.delivered(alert.Failure, alert.Resolved)) > 0
	})
	start(t, cfgFor(names[owner]), reg)
	waitFor(t, 15*time.Second, "the node_died alert resolved", func() bool {
		return len(rc.delivered(alert.NodeDied, alert.Resolved)) > 0
	})

	// Nothing is left to deliver: what the receiver has is all it gets.
	waitFor(t, 15*time.Second, "every alert delivered", func() bool {
		for _, e := range events() {
			if e.Pending() || e.Open() {
				return false
			}
		}
		return true
	})
	xs := events()
	if len(xs) != 2 {
		t.Fatalf("alert events: %+v; want a failure and a node_died", xs)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != 4 || rc.bad != 0 {
		t.Fatalf("deliveries %v (bad signatures %d); want 4 distinct", rc.got, rc.bad)
	}
	for d, k := range rc.got {
		if k != 1 {
			t.Errorf("delivery %s received %d times, want once", d, k)
		}
	}
	for _, e := range rc.events {
		if e.Kind == alert.Failure && e.State == alert.Resolved && e.Count < 2 {
			t.Errorf("the failure alert counted %d failures, want the streak (at least 2)", e.Count)
		}
	}
}

// TestRuntimeAlertRuleWebhook: a rule added at runtime through a Client,
// naming its own signed webhook, reaches a running node: two failures in
// a row alert that webhook once, a success resolves it; the nodes'
// notifiers get nothing of it.
func TestRuntimeAlertRuleWebhook(t *testing.T) {
	store := memory.New()
	group := "runtime-alerts"
	rc := &receiver{t: t, secret: "rule-secret", got: map[string]int{}}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	var others atomic.Int32
	var failing atomic.Bool
	failing.Store(true)
	cfg := fastConfig(store, group)
	cfg.AlertInterval = 50 * time.Millisecond
	cfg.AlertNotifiers = []alert.Notifier{alert.Func(func(context.Context, alert.Event) error { others.Add(1); return nil })}
	start(t, cfg, func(s *Scheduler) {
		if err := s.Register("job", "* * * * * *", func(context.Context) error {
			if failing.Load() {
				return errors.New("boom")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	c, err := NewClient(t.Context(), Config{Store: store, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.PutAlertRule(t.Context(), alert.StoredRule{Kind: alert.ConsecutiveFailures, Task: "job", Count: 2,
		WebhookURL: srv.URL + "/hook", WebhookSecret: rc.secret}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the consecutive failures alert", func() bool {
		return len(rc.delivered(alert.ConsecutiveFailures, alert.Firing)) == 1
	})
	failing.Store(false)
	waitFor(t, 15*time.Second, "its resolution", func() bool {
		return len(rc.delivered(alert.ConsecutiveFailures, alert.Resolved)) == 1
	})
	hs, err := c.AlertHistory(t.Context(), repository.AlertFilter{})
	if err != nil || len(hs) != 1 || hs[0].Rule != "consecutive_failures:job:2" || !hs[0].Delivered || hs[0].Count < 1 {
		t.Fatalf("AlertHistory = %+v, %v", hs, err)
	}
	waitFor(t, 15*time.Second, "the resolved delivery recorded", func() bool {
		hs, _ := c.AlertHistory(t.Context(), repository.AlertFilter{Live: true})
		return len(hs) == 0
	})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != 2 || rc.bad != 0 || others.Load() != 0 {
		t.Fatalf("webhook deliveries %v (bad %d), the nodes' notifiers %d; want a firing and a resolved, to the rule's webhook only", rc.got, rc.bad, others.Load())
	}
}
