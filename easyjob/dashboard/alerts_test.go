package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/easyjob-go/easyjob/repository"
)

// TestAPIAlerts: rules are put, listed (no secret, the webhook by scheme
// and host only), removed; a bad rule is 400 invalid_alert_rule, an
// unknown one 404; the alerts list pages and filters the live ones; the
// writes are audited and refused without CanAct.
func TestAPIAlerts(t *testing.T) {
	eachStore(t, func(t *testing.T, store repository.Store) {
		f := newAPIFixture(t, store, Options{CanAct: func(r *http.Request) bool { return r.Header.Get("X-Role") == "operator" }})
		op := []string{"X-Role", "operator"}
		audits := f.auditLen()
		var rule map[string]any
		f.want(http.StatusOK, &rule, http.MethodPut, "/alerts/rules/slow",
			`{"kind": "late", "task": "e1", "after": "30s", "webhook_url": "https://hooks.example.com/T0K3N", "webhook_secret": "sup3rsecret"}`, op...)
		if rule["name"] != "slow" || rule["after"] != "30s" || rule["signed"] != true || rule["webhook_url"] != "https://hooks.example.com/…" {
			t.Errorf("put answered %v", rule)
		}
		f.refused(http.StatusBadRequest, codeInvalidRule, "threshold", http.MethodPut, "/alerts/rules/bad", `{"kind": "deadman"}`, op...)
		f.refused(http.StatusBadRequest, codeRequest, "unknown field", http.MethodPut, "/alerts/rules/bad", `{"kind": "failure", "secret": "x"}`, op...)
		f.refused(http.StatusForbidden, codeForbidden, "", http.MethodPut, "/alerts/rules/x", `{"kind": "failure"}`)
		code, _, body := f.call(http.MethodGet, "/alerts/rules", "")
		if code != http.StatusOK || !strings.Contains(body, `"name":"slow"`) || strings.Contains(body, "T0K3N") || strings.Contains(body, "sup3rsecret") {
			t.Errorf("GET /alerts/rules: %d %s", code, body)
		}
		// An alert a node recorded, open.
		if _, _, err := store.OpenAlert(t.Context(), repository.AlertEvent{Group: "api", Rule: "slow", Kind: repository.AlertLate,
			Subject: "e1", Key: "k", Message: "e1 started late", Owner: 1}); err != nil {
			t.Fatal(err)
		}
		var list alertList
		f.want(http.StatusOK, &list, http.MethodGet, "/alerts?open=true&limit=10", "")
		if len(list.Alerts) != 1 || list.Alerts[0].Task != "e1" || list.Alerts[0].State != "firing" || list.Alerts[0].Delivered {
			t.Errorf("GET /alerts: %+v", list)
		}
		f.want(http.StatusOK, &list, http.MethodGet, "/alerts?before_id="+strconv.FormatInt(list.Alerts[0].ID, 10), "")
		if len(list.Alerts) != 0 {
			t.Errorf("GET /alerts before the only one: %+v", list)
		}
		f.refused(http.StatusBadRequest, codeRequest, "open", http.MethodGet, "/alerts?open=maybe", "")
		f.want(http.StatusOK, nil, http.MethodDelete, "/alerts/rules/slow", "", op...)
		f.refused(http.StatusNotFound, codeNotFound, "not found", http.MethodDelete, "/alerts/rules/slow", "", op...)
		if got := f.auditLen(); got != audits+2 {
			t.Errorf("audit entries: %d, want %d (a put and a removal)", got, audits+2)
		}
	})
}

// TestAlertsPage: the page lists the rules and alerts (escaped); its
// forms add and remove a rule for a user who may act, and are neither
// shown nor accepted for one who may not.
func TestAlertsPage(t *testing.T) {
	f := newFixture(t, Options{CanAct: func(r *http.Request) bool { return r.Header.Get("X-Role") == "operator" }})
	if _, _, err := f.store.OpenAlert(f.ctx, repository.AlertEvent{Group: "default", Rule: "r", Kind: repository.AlertFailure,
		Subject: "report", Key: "k", Message: xssName, Owner: 1}); err != nil {
		t.Fatal(err)
	}
	code, body := f.get("/alerts", "X-Role", "operator")
	if code != http.StatusOK || !strings.Contains(body, `id="alert-add"`) || !strings.Contains(body, "No rule added at runtime") ||
		strings.Contains(body, xssName) || !strings.Contains(body, "firing") {
		t.Fatalf("GET /alerts: %d\n%s", code, body)
	}
	post := func(form url.Values, role string) (int, string) {
		t.Helper()
		form.Set("csrf", f.token())
		req, err := http.NewRequestWithContext(f.ctx, http.MethodPost, f.srv.URL+"/ops/alerts", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Role", role)
		return f.do(req)
	}
	if code, _ := post(url.Values{"op": {"add"}, "kind": {"consecutive_failures"}, "task": {"report"}, "count": {"2"}}, "operator"); code != http.StatusSeeOther {
		t.Fatalf("add: %d", code)
	}
	if code, body := post(url.Values{"op": {"add"}, "kind": {"late"}}, "operator"); code != http.StatusUnprocessableEntity || !strings.Contains(body, "threshold") {
		t.Fatalf("add a late rule without a threshold: %d\n%s", code, body)
	}
	if code, _ := post(url.Values{"op": {"add"}, "kind": {"failure"}}, "viewer"); code != http.StatusForbidden {
		t.Fatalf("add by a viewer: %d", code)
	}
	_, body = f.get("/alerts", "X-Role", "operator")
	if !strings.Contains(body, `data-rule="consecutive_failures:report:2"`) || !strings.Contains(body, "2 in a row") {
		t.Fatalf("the page after an add:\n%s", body)
	}
	if code, _ := post(url.Values{"op": {"remove"}, "name": {"consecutive_failures:report:2"}}, "operator"); code != http.StatusSeeOther {
		t.Fatalf("remove: %d", code)
	}
	if code, _ := post(url.Values{"op": {"remove"}, "name": {"consecutive_failures:report:2"}}, "operator"); code != http.StatusNotFound {
		t.Fatalf("remove twice: %d", code)
	}
	_, body = f.get("/alerts", "X-Role", "viewer")
	if strings.Contains(body, `id="alert-add"`) || strings.Contains(body, "remove-rule") {
		t.Fatalf("a viewer sees the forms:\n%s", body)
	}
}
