package dashboard

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// basicAuth is the Authorization header of user with a password.
func basicAuth(user string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":pw"))
}

// lastAudit returns the newest entry of the fixture group's audit log.
func (f *fixture) lastAudit() easyjob.AuditEntry {
	f.t.Helper()
	es, err := f.client.Audit(f.ctx, easyjob.AuditFilter{Limit: 1})
	if err != nil {
		f.t.Fatal(err)
	}
	if len(es) == 0 {
		f.t.Fatal("the audit log is empty")
	}
	return es[0]
}

// auditLen counts the entries of the fixture group's audit log.
func (f *fixture) auditLen() int {
	f.t.Helper()
	es, err := f.client.Audit(f.ctx, easyjob.AuditFilter{Limit: 1000})
	if err != nil {
		f.t.Fatal(err)
	}
	return len(es)
}

// TestActionActor: an action is recorded under the request's user (the
// basic-auth user by default, else anonymous, or Options.Actor's name,
// cleaned), via the dashboard, from the request's remote host; a refused
// action is not recorded.
func TestActionActor(t *testing.T) {
	for _, c := range []struct {
		name   string
		opts   Options
		header []string
		want   string
	}{
		{"basic auth", Options{}, []string{"Authorization", basicAuth("carol")}, "carol"},
		{"no user", Options{}, nil, "anonymous"},
		{"Options.Actor", Options{Actor: func(r *http.Request) string { return r.Header.Get("X-User") }},
			[]string{"X-User", "dave", "Authorization", basicAuth("carol")}, "dave"},
		{"Options.Actor cleaned", Options{Actor: func(*http.Request) string { return " eve\x1b[2J\r\nroot\x00 " }}, nil, "eve[2Jroot"},
		{"Options.Actor empty", Options{Actor: func(*http.Request) string { return "" }},
			[]string{"Authorization", basicAuth("carol")}, "anonymous"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.opts)
			tok := f.token()
			form := url.Values{"op": {"pause"}, "name": {"orphan"}, "csrf": {tok}}
			if code, body := f.post(form, c.header...); code != http.StatusSeeOther {
				t.Fatalf("pause: %d:\n%s", code, body)
			}
			u, _ := url.Parse(f.srv.URL)
			e := f.lastAudit()
			if e.Name != c.want || e.Via != "dashboard" || e.From != u.Hostname() || e.Action != "pause" || e.Task != "orphan" {
				t.Errorf("entry %+v; want %s via dashboard from %s pausing orphan", e, c.want, u.Hostname())
			}
		})
	}

	f := newFixture(t, Options{})
	tok := f.token()
	for _, form := range []url.Values{
		{"op": {"pause"}, "name": {"orphan"}},                  // no CSRF token
		{"op": {"pause"}, "name": {"nope"}, "csrf": {tok}},     // no such task
		{"op": {"trigger"}, "name": {"orphan"}, "csrf": {tok}}, // refused: no node registers it
	} {
		if code, _ := f.post(form, "Authorization", basicAuth("carol")); code == http.StatusSeeOther {
			t.Errorf("%v: accepted", form)
		}
	}
	if n := f.auditLen(); n != 0 {
		t.Errorf("refused actions left %d audit entries, want 0", n)
	}
}

// TestCleanActor: a name from a request is recorded on one line, without
// control characters, valid UTF-8, at most maxActorLen runes.
func TestCleanActor(t *testing.T) {
	for in, want := range map[string]string{
		"carol":                       "carol",
		"  carol\t\n":                 "carol",
		"a\x1b[31mb\x7f\u2028c\u0085": "a[31mbc",
		"bad\xffutf8":                 "bad\uFFFDutf8",
		"":                            "",
	} {
		if got := cleanActor(in); got != want {
			t.Errorf("cleanActor(%q) = %q, want %q", in, got, want)
		}
	}
	if got := cleanActor(strings.Repeat("é", 3*maxActorLen)); utf8.RuneCountInString(got) != maxActorLen {
		t.Errorf("a long name kept %d runes, want %d", utf8.RuneCountInString(got), maxActorLen)
	}
}

// TestAuditPage: /audit lists the actions newest first with who, how and
// where from, links their tasks, filters by ?task= and pages by ?before=;
// read-only users see it too.
func TestAuditPage(t *testing.T) {
	f := newFixture(t, Options{})
	tok := f.token()
	if code, _ := f.post(url.Values{"op": {"pause"}, "name": {"orphan"}, "csrf": {tok}}, "Authorization", basicAuth("carol")); code != http.StatusSeeOther {
		t.Fatalf("pause: %d", code)
	}
	if code, _ := f.post(url.Values{"op": {"trigger"}, "name": {xssName}, "csrf": {tok}}); code != http.StatusSeeOther {
		t.Fatalf("trigger: %d", code)
	}
	code, body := f.get("/audit")
	if code != http.StatusOK {
		t.Fatalf("GET /audit: %d:\n%s", code, body)
	}
	for _, want := range []string{`data-action="pause"`, `data-action="trigger"`, ">carol<", ">anonymous<", ">dashboard<",
		">127.0.0.1<", `href="/ops/task?name=orphan"`, `href="/ops/audit" class="on"`, "&lt;script&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /audit: no %q in:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Error("GET /audit holds the script-like task name unescaped")
	}
	if strings.Index(body, `data-action="trigger"`) > strings.Index(body, `data-action="pause"`) {
		t.Error("the audit log is not newest first")
	}
	if _, body := f.get("/audit?task=orphan"); !strings.Contains(body, `data-action="pause"`) || strings.Contains(body, `data-action="trigger"`) {
		t.Errorf("?task=orphan: want orphan's pause alone:\n%s", body)
	}

	// 55 more entries (the client's own, as the CLI would write them):
	// 57 in all, two pages.
	ctx := easyjob.WithActor(f.ctx, easyjob.Actor{Name: "cli-user", Via: "cli", From: "laptop"})
	for i := range 55 {
		var err error
		if i%2 == 0 {
			_, err = f.client.Resume(ctx, "orphan")
		} else {
			_, err = f.client.Pause(ctx, "orphan")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	f.dash.clearCache()
	es, err := f.client.Audit(f.ctx, easyjob.AuditFilter{Limit: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	older := strconv.FormatInt(es[pageSize-1].ID, 10)
	_, body = f.get("/audit")
	if n := strings.Count(body, "data-audit="); n != pageSize || !strings.Contains(body, `before=`+older+`" rel="next"`) {
		t.Fatalf("first page: %d rows, want %d and a link to the entries before %s:\n%s", n, pageSize, older, body)
	}
	_, body = f.get("/audit?before=" + older)
	if n := strings.Count(body, "data-audit="); n != 57-pageSize || strings.Contains(body, `rel="next"`) || !strings.Contains(body, ">carol<") {
		t.Errorf("second page: %d rows, want the %d oldest (carol's among them) and no older page:\n%s", n, 57-pageSize, body)
	}

	ro := newFixture(t, Options{ReadOnly: true})
	if code, body := ro.get("/audit"); code != http.StatusOK || !strings.Contains(body, "No operator action recorded") {
		t.Errorf("GET /audit (read-only): %d:\n%s", code, body)
	}
}

// TestTaskPageKindsAndAudit: the run table tells a manual run from a
// cron one, and the task page lists the task's operator actions.
func TestTaskPageKindsAndAudit(t *testing.T) {
	f := newFixture(t, Options{})
	tok := f.token()
	if code, _ := f.post(url.Values{"op": {"trigger"}, "name": {xssName}, "csrf": {tok}}, "Authorization", basicAuth("carol")); code != http.StatusSeeOther {
		t.Fatalf("trigger: %d", code)
	}
	if code, _ := f.post(url.Values{"op": {"pause"}, "name": {"orphan"}, "csrf": {tok}}); code != http.StatusSeeOther {
		t.Fatalf("pause: %d", code)
	}
	f.run(xssName, repository.ExecSucceeded, "") // the triggered fire
	f.run(xssName, repository.ExecSucceeded, "") // the next, the cron's
	f.dash.clearCache()

	_, body := f.get("/task?name=" + url.QueryEscape(xssName))
	for _, want := range []string{`data-kind="manual"`, `<span class="kind manual"`, `data-kind="cron"`,
		`id="operator-actions"`, `data-action="trigger"`, ">carol<", `href="/ops/audit?task=%3cscript%3e`} {
		if !strings.Contains(body, want) {
			t.Errorf("task page: no %q in:\n%s", want, body)
		}
	}
	if strings.Contains(body, `data-action="pause"`) {
		t.Error("the task page lists another task's action")
	}
	if _, body := f.get("/task?name=report"); !strings.Contains(body, `data-kind="cron"`) || !strings.Contains(body, "No operator action recorded") {
		t.Errorf("report's page: want cron runs and no action:\n%s", body)
	}
}

// noAuditStore fails the audit log's reads as a driver would.
type noAuditStore struct{ *memory.Store }

func (noAuditStore) Audit(context.Context, string, repository.AuditFilter) ([]repository.AuditEntry, error) {
	return nil, errDriver
}

// TestTaskPageAuditUnavailable: a failed read of the audit log leaves the
// task page up, saying so without the driver's details; /audit answers 503.
func TestTaskPageAuditUnavailable(t *testing.T) {
	store := memory.New()
	if _, err := store.UpsertTasks(t.Context(), "default", []repository.TaskDef{{Name: "report", Cron: "0 * * * * *"}}); err != nil {
		t.Fatal(err)
	}
	client, err := easyjob.NewClient(t.Context(), easyjob.Config{Store: noAuditStore{store}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	var logged bytes.Buffer
	h := New(client, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	rec := serve(h, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/task?name=report", nil))
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, "Cannot read the audit log: the database returned an error") ||
		strings.Contains(body, "secretdb") {
		t.Errorf("task page: %d:\n%s", rec.Code, body)
	}
	if rec := serve(h, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/audit", nil)); rec.Code != http.StatusServiceUnavailable ||
		strings.Contains(rec.Body.String(), "secretdb") {
		t.Errorf("GET /audit: %d, want 503 without the driver's details", rec.Code)
	}
	if !strings.Contains(logged.String(), "secretdb") {
		t.Errorf("the log did not get the error itself: %s", logged.String())
	}
}
