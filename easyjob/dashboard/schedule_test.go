package dashboard

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// postTo submits form to path (under /ops) and returns the status, the
// Location and the body.
func (f *fixture) postTo(path string, form url.Values) (int, string, string) {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.ctx, http.MethodPost, f.srv.URL+"/ops"+path, strings.NewReader(form.Encode()))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := f.http.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("Location"), string(b)
}

// TestScheduleForms: a schedule created, edited and triggered with args
// from the dashboard's forms; a refused form comes back filled in with
// the library's message, and nothing is written.
func TestScheduleForms(t *testing.T) {
	f := newFixture(t, Options{})
	node := startEchoNode(t, f.store, "default")
	waitForEcho(t, f.client)
	tok := f.token()

	code, body := f.get("/schedule/new")
	for _, want := range []string{`action="/ops/schedule/new"`, `name="csrf" value="` + tok + `"`, `<datalist id="handlers"><option value="echo">`,
		`id="args"`, `id="timezone"`, `name="paused"`, `type="datetime-local"`, `<tr data-handler="echo">`} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET /schedule/new: %d, no %q in:\n%s", code, want, body)
		}
	}
	if _, body := f.get("/tasks"); !strings.Contains(body, `href="/ops/schedule/new"`) {
		t.Error("the task list has no link to the new schedule form")
	}

	form := func(kv ...string) url.Values {
		v := url.Values{"csrf": {tok}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	for _, c := range []struct {
		form url.Values
		code int
		says string
	}{
		{form("name", "f1", "handler", "echo", "cron", "0 0 0 1 1 *", "args", `{"n": "x"}`), 400, "args.n: want integer"},
		{form("name", "f1", "handler", "echo", "cron", "0 0 0 1 1 *", "args", `{"n": `), 400, "not JSON"},
		{form("name", "f1", "handler", "nope", "cron", "0 0 0 1 1 *"), 409, `handler &#34;nope&#34;`},
		{form("name", "f1", "handler", "echo", "cron", "61 * * * *"), 400, "invalid cron"},
		{form("name", "f1", "handler", "echo", "at", "2000-01-01T10:00"), 400, "has passed"},
		{form("name", "f1", "handler", "echo", "cron", "0 0 0 1 1 *", "timeout", "soon"), 400, "timeout &#34;soon&#34;"},
		{form("name", xssName, "handler", "echo", "cron", "0 0 0 1 1 *", "args", `{"n": "<b>"}`), 400, "args.n"},
	} {
		code, _, body := f.postTo("/schedule/new", c.form)
		if code != c.code || !strings.Contains(body, `id="form-error"`) || !strings.Contains(body, c.says) {
			t.Errorf("POST %v: %d, want %d with the error saying %q:\n%s", c.form, code, c.code, c.says, body)
		}
		if !strings.Contains(body, `value="`+strings.ReplaceAll(c.form.Get("handler"), `"`, "&#34;")+`"`) {
			t.Errorf("POST %v: the refused form lost its handler", c.form)
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, `"<b>"`) {
			t.Errorf("POST %v: markup unescaped", c.form)
		}
	}
	if code, _, _ := f.postTo("/schedule/new", url.Values{"name": {"f1"}, "handler": {"echo"}, "cron": {"0 0 0 1 1 *"}}); code != http.StatusForbidden {
		t.Errorf("POST without the CSRF token: %d, want 403", code)
	}
	if n := f.auditLen(); n != 0 {
		t.Fatalf("refused forms wrote %d audit entries", n)
	}

	code, loc, _ := f.postTo("/schedule/new", form("name", "f1", "handler", "echo", "cron", "0 0 0 1 1 *", "args", `{"n": 1}`, "timezone", "Europe/Paris", "timeout", "30s"))
	if code != http.StatusSeeOther || loc != "/ops/task?done=create&name=f1" {
		t.Fatalf("create: %d to %q", code, loc)
	}
	if ti := f.task("f1"); !ti.Dynamic || ti.Handler != "echo" || compactJSON(ti.Args) != `{"n":1}` || ti.Timezone != "Europe/Paris" {
		t.Fatalf("created %+v", ti)
	}
	_, body = f.get("/task?name=f1&done=create")
	for _, want := range []string{"Created:", `id="task-handler"><code>echo</code>`, `id="task-args"><code class="args">{&#34;n&#34;:1}</code>`,
		`id="task-revision">1<`, `href="/ops/schedule/edit?name=f1"`, `id="trigger-with-args"`, `>{&#34;n&#34;:1}</textarea>`, "<th title=\"the arguments it ran with\">args</th>"} {
		if !strings.Contains(body, want) {
			t.Errorf("task page: no %q in:\n%s", want, body)
		}
	}

	// Edit: the form shows the definition; a refused edit keeps it.
	code, body = f.get("/schedule/edit?name=f1")
	for _, want := range []string{`action="/ops/schedule/edit"`, `value="echo"`, `>{&#34;n&#34;:1}</textarea>`, `value="Europe/Paris"`, `value="30s"`, "revision 1"} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET /schedule/edit: %d, no %q", code, want)
		}
	}
	if code, _ := f.get("/schedule/edit?name=report"); code != http.StatusConflict {
		t.Errorf("edit of a code task: %d, want 409", code)
	}
	if code, _ := f.get("/schedule/edit?name=nope"); code != http.StatusNotFound {
		t.Errorf("edit of an unknown task: %d, want 404", code)
	}
	code, _, body = f.postTo("/schedule/edit", form("name", "f1", "handler", "echo", "cron", "0 0 0 1 2 *", "args", `{"n": 2.5}`))
	if code != http.StatusBadRequest || !strings.Contains(body, "args.n") || f.task("f1").Revision != 1 {
		t.Errorf("a refused edit: %d, revision %d:\n%s", code, f.task("f1").Revision, body)
	}
	code, loc, _ = f.postTo("/schedule/edit", form("name", "f1", "handler", "echo", "cron", "0 0 0 1 2 *", "args", `{"n": 2}`))
	if ti := f.task("f1"); code != http.StatusSeeOther || loc != "/ops/task?done=update&name=f1" || ti.Revision != 2 || compactJSON(ti.Args) != `{"n":2}` {
		t.Errorf("edit: %d to %q, %+v", code, loc, ti)
	}

	// Trigger with args: refused args come back in the trigger form.
	code, _, body = f.postTo("/action", form("op", "trigger", "name", "f1", "args", `{"n": "x"}`))
	if code != http.StatusBadRequest || !strings.Contains(body, `id="form-error"`) || !strings.Contains(body, `>{&#34;n&#34;: &#34;x&#34;}</textarea>`) ||
		f.task("f1").TriggerRequested {
		t.Errorf("trigger with bad args: %d:\n%s", code, body)
	}
	if code, loc, _ := f.postTo("/action", form("op", "trigger", "name", "f1", "args", `{"n": 5}`)); code != http.StatusSeeOther || loc != "/ops/task?done=trigger&name=f1" {
		t.Fatalf("trigger with args: %d to %q", code, loc)
	}
	waitUntil(t, "the run with n=5", func() bool { return node.saw(5) })
	waitUntil(t, "the run on the task page", func() bool {
		f.dash.clearCache()
		_, body = f.get("/task?name=f1")
		return strings.Contains(body, `data-kind="manual"`) && strings.Contains(body, `<code class="args" title="{&#34;n&#34;:5}">{&#34;n&#34;:5}</code>`)
	})
	for _, e := range []string{"trigger", "update", "create"} {
		if !strings.Contains(body, `data-action="`+e+`"`) {
			t.Errorf("the task page's operator actions lack %s", e)
		}
	}
}

// TestScheduleFormsReadOnly: no form is offered, none is accepted.
func TestScheduleFormsReadOnly(t *testing.T) {
	f := newFixture(t, Options{CanAct: func(*http.Request) bool { return false }})
	for _, path := range []string{"/schedule/new", "/schedule/edit?name=report"} {
		if code, _ := f.get(path); code != http.StatusForbidden {
			t.Errorf("GET %s: %d, want 403", path, code)
		}
	}
	if _, body := f.get("/tasks"); strings.Contains(body, "/schedule/new") {
		t.Error("a viewer is offered the new schedule form")
	}
	for _, path := range []string{"/schedule/new", "/schedule/edit"} {
		if code, _, _ := f.postTo(path, url.Values{"name": {"f1"}, "handler": {"echo"}, "cron": {"* * * * *"}}); code != http.StatusForbidden {
			t.Errorf("POST %s: %d, want 403", path, code)
		}
	}
}
