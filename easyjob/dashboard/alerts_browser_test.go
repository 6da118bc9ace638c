package dashboard

import (
	"encoding/json"
	"testing"

	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository"
)

// TestBrowserAlerts drives the alerts page in headless Chromium: it lists
// an alert (its script-like message as text), adds a rule from the form
// and removes it from its row, and fits a 390 px phone with a rule and an
// alert listed. It skips without Chromium, except under CI=true.
func TestBrowserAlerts(t *testing.T) {
	chromium := findChromium(t)
	f := newFixture(t, Options{})
	if _, _, err := f.store.OpenAlert(f.ctx, repository.AlertEvent{Group: "default", Rule: "failure:report", Kind: repository.AlertFailure,
		Subject: "report", Key: "k", Message: xssName, Owner: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.PutAlertRule(f.ctx, alert.StoredRule{Name: "a-rule-with-a-rather-long-name-for-a-phone-screen", Kind: alert.NodeDied,
		WebhookURL: "https://hooks.a-rather-long-host-name-for-a-phone-screen.example.com/services/T0K3N", WebhookSecret: "s"}); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, chromium, f.srv.URL+"/ops")
	b.open("/alerts")
	b.waitJS("the alert, its message as text", `document.querySelector("tr[data-alert] td:last-child").textContent === `+jsString(xssName))
	b.setValue("#alert-kind", "late")
	b.setValue(`input[name="task"]`, "report")
	b.setValue(`input[name="after"]`, "30s")
	b.click("#alert-add")
	b.waitJS("the rule added", `document.querySelector('tr[data-rule="late:report:30s"]') !== null`)
	b.shot("alerts")
	b.phone("/alerts")
	b.click(`tr[data-rule="late:report:30s"] button.remove-rule`)
	b.waitJS("the rule removed", `location.pathname === "/ops/alerts" && document.querySelector('tr[data-rule="late:report:30s"]') === null && document.querySelector("tr[data-rule]") !== null`)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s) // JSON strings are JavaScript strings
	return string(b)
}
