package alert

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestSignVerify: the signature is the hex HMAC-SHA256 of the body under
// the secret, and Verify refuses another body, secret or form.
func TestSignVerify(t *testing.T) {
	body := []byte(`{"id":1}`)
	got := Sign("s3cret", body)
	if !strings.HasPrefix(got, "sha256=") || len(got) != len("sha256=")+64 {
		t.Fatalf("Sign = %q, want sha256= and 64 hex digits", got)
	}
	if !Verify("s3cret", body, got) {
		t.Fatal("Verify refused its own signature")
	}
	for _, c := range []struct{ secret, body, sig string }{
		{"other", string(body), got},
		{"s3cret", `{"id":2}`, got},
		{"s3cret", string(body), strings.TrimPrefix(got, "sha256=")},
		{"s3cret", string(body), ""},
	} {
		if Verify(c.secret, []byte(c.body), c.sig) {
			t.Errorf("Verify(%q, %q, %q) = true", c.secret, c.body, c.sig)
		}
	}
}

// TestSignKnownValue pins the signature against a value computed
// elsewhere (RFC 4231 test case 2: key "Jefe").
func TestSignKnownValue(t *testing.T) {
	got := Sign("Jefe", []byte("what do ya want for nothing?"))
	if want := "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"; got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

// TestWebhookRetries: a 503 is retried with backoff until a 2xx; the
// request is a signed JSON POST with the delivery header, the same on
// every attempt.
func TestWebhookRetries(t *testing.T) {
	var calls atomic.Int32
	var deliveries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %s %s", r.Method, r.Header.Get("Content-Type"))
		}
		if !Verify("k", body, r.Header.Get(SignatureHeader)) {
			t.Errorf("bad signature %q", r.Header.Get(SignatureHeader))
		}
		var e Event
		if err := json.Unmarshal(body, &e); err != nil || e.ID != 42 || e.State != Firing || e.Kind != Failure {
			t.Errorf("body %s: %+v, %v", body, e, err)
		}
		deliveries = append(deliveries, r.Header.Get(DeliveryHeader))
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	w := &Webhook{URL: srv.URL, Secret: "k", Backoff: time.Millisecond}
	if err := w.Notify(t.Context(), Event{ID: 42, Kind: Failure, State: Firing}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 || deliveries[0] != "42-firing" || deliveries[2] != "42-firing" {
		t.Fatalf("%d calls, deliveries %v; want 3 of 42-firing", calls.Load(), deliveries)
	}
}

// TestWebhookFinal: a 4xx is not retried; retries run out; a receiver
// that does not answer costs the timeout; no error names the URL's path,
// query or the secret.
func TestWebhookFinal(t *testing.T) {
	var calls atomic.Int32
	status := atomic.Int32{}
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if status.Load() == 0 {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	defer close(hang)
	url := srv.URL + "/hooks/T0K3N?key=abc"
	w := &Webhook{URL: url, Secret: "sup3rsecret", Backoff: time.Millisecond, Retries: 2, Timeout: 50 * time.Millisecond}
	check := func(err error, wantCalls int32) {
		t.Helper()
		if err == nil {
			t.Fatal("Notify succeeded")
		}
		for _, leak := range []string{"T0K3N", "abc", "sup3rsecret"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("error %q names %q", err, leak)
			}
		}
		if got := calls.Swap(0); got != wantCalls {
			t.Errorf("%d calls, want %d (error %v)", got, wantCalls, err)
		}
	}
	status.Store(http.StatusBadRequest)
	check(w.Notify(t.Context(), Event{ID: 1}), 1)
	status.Store(http.StatusTooManyRequests)
	check(w.Notify(t.Context(), Event{ID: 1}), 3)
	status.Store(0)
	check(w.Notify(t.Context(), Event{ID: 1}), 3)
	if s := w.String(); strings.Contains(s, "T0K3N") || strings.Contains(s, "sup3rsecret") {
		t.Errorf("String() = %q", s)
	}
}

// TestRules: defaults, names and what Validate refuses.
func TestRules(t *testing.T) {
	for _, c := range []struct {
		in   Rule
		name string
		ok   bool
	}{
		{Rule{Kind: Failure, Task: "report"}, "failure:report", true},
		{Rule{Kind: ConsecutiveFailures}, "consecutive_failures:3", true},
		{Rule{Kind: ConsecutiveFailures, Task: "t", Count: 5}, "consecutive_failures:t:5", true},
		{Rule{Kind: Late, Task: "t", After: 30 * time.Second}, "late:t:30s", true},
		{Rule{Kind: Deadman, After: time.Hour}, "deadman:1h0m0s", true},
		{Rule{Kind: NodeDied, Task: "ignored"}, "node_died", true},
		{Rule{Kind: NoHandler, Name: "mine"}, "mine", true},
		{Rule{Kind: Late}, "", false},
		{Rule{Kind: Deadman, After: -1}, "", false},
		{Rule{Kind: "nope"}, "", false},
		{Rule{Kind: Missed, Name: "two\nlines"}, "", false},
	} {
		got, err := c.in.Normalize()
		if (err == nil) != c.ok {
			t.Errorf("Normalize(%+v) = %v", c.in, err)
			continue
		}
		if err != nil && !errors.Is(err, ErrInvalidRule) {
			t.Errorf("Normalize(%+v) = %v, not ErrInvalidRule", c.in, err)
		}
		if c.ok && got.Name != c.name {
			t.Errorf("Normalize(%+v).Name = %q, want %q", c.in, got.Name, c.name)
		}
	}
}

// TestFromStore: a stored event as a notifier receives it.
func TestFromStore(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := FromStore(repository.AlertEvent{ID: 3, Group: "g", Rule: "r", Kind: Failure, Subject: "t", Message: "t failed", Count: 2, FiredAt: at})
	if e.State != Firing || e.Task != "t" || e.Count != 2 || !e.ResolvedAt.IsZero() {
		t.Fatalf("firing: %+v", e)
	}
	e = FromStore(repository.AlertEvent{ID: 3, Kind: NodeDied, Subject: "node 7", FiredAt: at, ResolvedAt: at.Add(time.Minute), ResolveMessage: "back"})
	if e.State != Resolved || e.Task != "" || e.Resolution != "back" {
		t.Fatalf("resolved: %+v", e)
	}
	var f Func = func(ctx context.Context, got Event) error {
		if got.ID != 3 {
			t.Errorf("Func got %+v", got)
		}
		return nil
	}
	if err := f.Notify(t.Context(), e); err != nil {
		t.Fatal(err)
	}
}
