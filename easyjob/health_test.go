package easyjob

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository/memory"
)

// probe asks h for path and decodes the answer.
func probe(t *testing.T, h http.Handler, path string) (int, Health) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil))
	var out Health
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s: %v in %q", path, err, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s: Content-Type %q", path, ct)
	}
	return rec.Code, out
}

// TestHealthJSONSeconds: durations in the JSON are seconds, named so.
func TestHealthJSONSeconds(t *testing.T) {
	b, err := json.Marshal(Health{HeartbeatAge: 1500 * time.Millisecond, WedgedAfter: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"heartbeat_age_seconds":1.5`) || !strings.Contains(s, `"wedged_after_seconds":10`) ||
		strings.Contains(s, `"heartbeat_age"`) {
		t.Fatalf("Health JSON %s", s)
	}
	b, err = json.Marshal(NodeInfo{ID: 7, HeartbeatAge: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var n NodeInfo
	if err := json.Unmarshal(b, &n); err != nil || n.ID != 7 || n.HeartbeatAge != 250*time.Millisecond ||
		!strings.Contains(string(b), `"heartbeat_age_seconds":0.25`) {
		t.Fatalf("NodeInfo JSON %s, back %+v (%v)", b, n, err)
	}
}

func TestHealthBeforeRun(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := s.HealthHandler()
	for _, path := range []string{"/livez", "/readyz", "/healthz"} {
		code, got := probe(t, h, path)
		if code != http.StatusServiceUnavailable || got.State != StateNew || got.Live || got.Ready {
			t.Fatalf("%s before Run: %d %+v", path, code, got)
		}
	}
}

func TestHealthLifecycle(t *testing.T) {
	cfg := fastConfig(memory.New(), groupFor(t))
	tn := start(t, cfg, func(s *Scheduler) {
		if err := s.Register("tick", "* * * * * *", func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
	})
	h := tn.s.HealthHandler()
	waitFor(t, 5*time.Second, "ready", func() bool { return tn.s.Health().Ready })
	code, got := probe(t, h, "/readyz")
	if code != http.StatusOK || got.State != StateRunning || !got.Migrated || !got.Live || got.NodeID != int64(tn.n.ID()) || got.Reason != "" {
		t.Fatalf("/readyz while running: %d %+v (node %d)", code, got, tn.n.ID())
	}
	if got.HeartbeatAge < 0 || got.HeartbeatAge > cfg.HeartbeatInterval*2 || got.LastHeartbeat.IsZero() || got.WedgedAfter != tn.s.Health().WedgedAfter {
		t.Fatalf("heartbeat age %v, last %v", got.HeartbeatAge, got.LastHeartbeat)
	}
	if code, _ := probe(t, h, "/livez"); code != http.StatusOK {
		t.Fatalf("/livez while running: %d", code)
	}
	// HEAD answers the status without a body.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodHead, "/readyz", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Fatalf("HEAD /readyz: %d, %d bytes", rec.Code, rec.Body.Len())
	}

	// A heartbeat that never returns: not ready after LiveAfter, not live
	// after WedgedAfter; live and ready again once it returns.
	release := make(chan struct{})
	hook := func(ctx context.Context) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	tn.hooks.BeforeHeartbeat.Store(&hook)
	waitFor(t, 5*time.Second, "not ready", func() bool { return !tn.s.Health().Ready })
	wedged := tn.s.Health().WedgedAfter
	waitFor(t, wedged+5*time.Second, "not live", func() bool { return !tn.s.Health().Live })
	code, got = probe(t, h, "/livez")
	if code != http.StatusServiceUnavailable || !strings.Contains(got.Reason, "wedged") {
		t.Fatalf("/livez wedged: %d %+v", code, got)
	}
	tn.hooks.BeforeHeartbeat.Store(nil)
	close(release)
	waitFor(t, 5*time.Second, "live and ready again", func() bool { h := tn.s.Health(); return h.Live && h.Ready })

	tn.stop(t)
	code, got = probe(t, h, "/livez")
	if code != http.StatusServiceUnavailable || got.State != StateStopped || got.Live || got.Ready {
		t.Fatalf("/livez after Run returned: %d %+v", code, got)
	}
}
