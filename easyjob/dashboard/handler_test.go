package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// TestPagesRender loads every view under the /ops/ prefix and checks
// that its links carry the prefix.
func TestPagesRender(t *testing.T) {
	f := newFixture(t, Options{})
	for _, c := range []struct{ path, want string }{
		{"/", "Fires per minute"},
		{"/tasks", `href="/ops/task?name=report"`},
		{"/tasks?show=stale", `data-task="orphan"`},
		{"/tasks?q=REP", `data-task="report"`},
		{"/task?name=report", "&lt;b&gt;boom&lt;/b&gt;"},
		{"/task?name=mail", `href="/ops/task?name=report"`}, // the chain tree
		{"/task?name=report&status=failed&since=1h", `data-status="failed"`},
		{"/nodes", "node-a"},
		{"/audit", "No operator action recorded"},
		{"/audit?task=report&before=7", `href="/ops/task?name=report"`},
		{"/reschedule?name=report&cron=*/7+*+*+*+*+*", "every 7 seconds"},
		{"/assets/style.css", ".timeline"},
		{"/assets/live.js", "X-Easyjob-Partial"},
	} {
		code, body := f.get(c.path)
		if code != http.StatusOK || !strings.Contains(body, c.want) {
			t.Errorf("GET %s: %d; want 200 with %q; body:\n%s", c.path, code, c.want, body)
		}
	}
	if _, body := f.get("/tasks?show=stale"); strings.Contains(body, `data-task="report"`) {
		t.Error("stale filter lists report, which node-a registers")
	}
}

// TestSecurityHeaders: every page forbids inline scripts and framing.
func TestSecurityHeaders(t *testing.T) {
	f := newFixture(t, Options{})
	hd, _ := f.headers("/")
	if csp := hd.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	if hd.Get("X-Content-Type-Options") != "nosniff" {
		t.Error("no nosniff")
	}
}

// TestEscaping: a task named like a script, and an error text with
// markup, are shown as text on every page that shows them.
func TestEscaping(t *testing.T) {
	f := newFixture(t, Options{})
	f.run("report", repository.ExecFailed, `<img src=x onerror=alert(1)>`)
	name := url.QueryEscape(xssName)
	for _, path := range []string{"/tasks", "/task?name=" + name, "/reschedule?name=" + name + "&cron=%3Cscript%3E",
		"/task?name=%3Cscript%3Enope", "/task?name=report", "/", "/audit?task=" + name} {
		_, body := f.get(path)
		for _, raw := range []string{"<script>", "<img src=x", `alert("x")`} {
			if strings.Contains(body, raw) {
				t.Errorf("GET %s: the page holds %q unescaped", path, raw)
			}
		}
	}
	if _, body := f.get("/tasks"); !strings.Contains(body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
		t.Error("the task list does not show the script-like name as text")
	}
}

// TestUnknownTask: pages and actions on a task that does not exist answer
// 404 naming it.
func TestUnknownTask(t *testing.T) {
	f := newFixture(t, Options{})
	for _, path := range []string{"/task?name=nope", "/reschedule?name=nope&cron=*+*+*+*+*"} {
		if code, body := f.get(path); code != http.StatusNotFound || !strings.Contains(body, "&#34;nope&#34;") {
			t.Errorf("GET %s: %d, want 404 naming the task:\n%s", path, code, body)
		}
	}
	tok := f.token()
	for _, op := range []string{"trigger", "pause", "resume"} {
		if code, _ := f.post(url.Values{"op": {op}, "name": {"nope"}, "csrf": {tok}}); code != http.StatusNotFound {
			t.Errorf("POST %s nope: %d, want 404", op, code)
		}
	}
	if code, _ := f.post(url.Values{"op": {"reschedule"}, "name": {"nope"}, "cron": {"* * * * *"}, "csrf": {tok}}); code != http.StatusNotFound {
		t.Errorf("POST reschedule nope: %d, want 404", code)
	}
	if code, _ := f.post(url.Values{"op": {"explode"}, "name": {"report"}, "csrf": {tok}}); code != http.StatusBadRequest {
		t.Errorf("POST explode: %d, want 400", code)
	}
	if code, _ := f.get("/no-such-page"); code != http.StatusNotFound {
		t.Errorf("GET /no-such-page: %d, want 404", code)
	}
}

// TestActions: trigger, pause, resume and reschedule through the forms
// act like the client (and the CLI) and redirect back.
func TestActions(t *testing.T) {
	f := newFixture(t, Options{})
	tok := f.token()
	code, _ := f.post(url.Values{"op": {"pause"}, "name": {"orphan"}, "csrf": {tok}})
	if code != http.StatusSeeOther || !f.task("orphan").Paused {
		t.Fatalf("pause: %d, paused %v", code, f.task("orphan").Paused)
	}
	if _, body := f.get("/task?name=orphan&done=pause"); !strings.Contains(body, "Paused: no further fires") ||
		!strings.Contains(body, `value="resume"`) {
		t.Error("after pause: no flash or no resume button")
	}
	if code, _ := f.post(url.Values{"op": {"resume"}, "name": {"orphan"}, "csrf": {tok}, "back": {"?show=stale"}}); code != http.StatusSeeOther || f.task("orphan").Paused {
		t.Fatalf("resume: %d", code)
	}
	// A trigger nothing would run (no live node registers orphan) is
	// refused, saying why; one of a registered task is written.
	if code, body := f.post(url.Values{"op": {"trigger"}, "name": {"orphan"}, "csrf": {tok}}); code != http.StatusConflict ||
		!strings.Contains(body, "registers") {
		t.Fatalf("trigger of a stale task: %d, want 409 saying no live node registers it:\n%s", code, body)
	}
	if code, _ := f.post(url.Values{"op": {"trigger"}, "name": {xssName}, "csrf": {tok}}); code != http.StatusSeeOther {
		t.Fatalf("trigger: %d", code)
	}
	now, _ := f.client.Now(f.ctx)
	if next := f.task(xssName).NextStartTime; next.After(now) {
		t.Errorf("triggered task's next fire %v, after now %v", next, now)
	}
	code, _ = f.post(url.Values{"op": {"reschedule"}, "name": {"orphan"}, "cron": {"*/7 * * * * *"}, "csrf": {tok}})
	if code != http.StatusSeeOther || f.task("orphan").Cron != "*/7 * * * * *" {
		t.Fatalf("reschedule: %d, cron %q", code, f.task("orphan").Cron)
	}
}

// TestActionRedirects: an action returns to the page its form was on,
// under the mount point, with the list's query kept.
func TestActionRedirects(t *testing.T) {
	f := newFixture(t, Options{})
	tok := f.token()
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"op": {"trigger"}, "name": {"report"}}, "/ops/task?done=trigger&name=report"},
		{url.Values{"op": {"trigger"}, "name": {"report"}, "back": {"?"}}, "/ops/tasks?done=trigger&task=report"},
		{url.Values{"op": {"trigger"}, "name": {"report"}, "back": {"?q=rep&show=doing&after=r%C3%A9&evil=x"}},
			"/ops/tasks?after=r%C3%A9&q=rep&show=doing&done=trigger&task=report"},
		{url.Values{"op": {"trigger"}, "name": {"report"}, "back": {"//evil.example/"}}, "/ops/tasks?done=trigger&task=report"},
	} {
		c.form.Set("csrf", tok)
		req, _ := http.NewRequestWithContext(f.ctx, http.MethodPost, f.srv.URL+"/ops/action", strings.NewReader(c.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := f.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != c.want {
			t.Errorf("%v: %d to %q, want 303 to %q", c.form, res.StatusCode, loc, c.want)
		}
	}
}

// TestReadOnly: no action is offered, and none is accepted.
func TestReadOnly(t *testing.T) {
	f := newFixture(t, Options{ReadOnly: true})
	for _, path := range []string{"/", "/tasks", "/task?name=report", "/reschedule?name=report&cron=*+*+*+*+*", "/audit"} {
		code, body := f.get(path)
		if code != http.StatusOK || strings.Contains(body, `method="post"`) || strings.Contains(body, `name="csrf"`) {
			t.Errorf("GET %s (read-only): %d, holds a form or a token", path, code)
		}
		if !strings.Contains(body, "read-only") {
			t.Errorf("GET %s: read-only mode not shown", path)
		}
	}
	if code, _ := f.post(url.Values{"op": {"pause"}, "name": {"report"}, "csrf": {"x"}}); code != http.StatusForbidden {
		t.Errorf("POST pause (read-only): %d, want 403", code)
	}
	if f.task("report").Paused {
		t.Error("read-only dashboard paused a task")
	}
}

// TestAuthHook: CanAct decides per request (here from a header an auth
// middleware would set), and BasicAuth guards everything.
func TestAuthHook(t *testing.T) {
	f := newFixture(t, Options{CanAct: func(r *http.Request) bool { return r.Header.Get("X-Role") == "operator" }})
	if _, body := f.get("/tasks"); strings.Contains(body, `method="post"`) {
		t.Error("a viewer is offered actions")
	}
	if _, body := f.get("/tasks", "X-Role", "operator"); !strings.Contains(body, `method="post"`) {
		t.Error("an operator is not offered actions")
	}
	tok := f.token() // the viewer's page sets no token; this one does
	if tok == "" {
		t.Fatal("no token")
	}
	if code, _ := f.post(url.Values{"op": {"pause"}, "name": {"report"}, "csrf": {tok}}); code != http.StatusForbidden {
		t.Errorf("viewer POST: %d, want 403", code)
	}
	if code, _ := f.post(url.Values{"op": {"pause"}, "name": {"report"}, "csrf": {tok}}, "X-Role", "operator"); code != http.StatusSeeOther {
		t.Errorf("operator POST: %d, want 303", code)
	}

	guarded := BasicAuth(f.dash, "test", "ops", "s3cret")
	for _, c := range []struct {
		user, pass string
		want       int
	}{{"", "", http.StatusUnauthorized}, {"ops", "wrong", http.StatusUnauthorized}, {"x", "s3cret", http.StatusUnauthorized}, {"ops", "s3cret", http.StatusOK}} {
		req := newRequest(t, http.MethodGet, "/tasks", "")
		if c.user != "" {
			req.SetBasicAuth(c.user, c.pass)
		}
		rec := serve(guarded, req)
		if rec.Code != c.want {
			t.Errorf("basic auth %q/%q: %d, want %d", c.user, c.pass, rec.Code, c.want)
		}
		if c.want == http.StatusUnauthorized && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Basic realm=") {
			t.Errorf("401 without a Basic challenge")
		}
	}
}

// TestCSRF: an action needs the token of its cookie repeated in the form,
// and a same-origin request.
func TestCSRF(t *testing.T) {
	f := newFixture(t, Options{})
	pause := func(form url.Values, header ...string) int {
		form.Set("op", "pause")
		form.Set("name", "report")
		code, _ := f.post(form, header...)
		return code
	}
	if code := pause(url.Values{}); code != http.StatusForbidden {
		t.Errorf("no cookie, no token: %d, want 403", code)
	}
	tok := f.token()
	if code := pause(url.Values{}); code != http.StatusForbidden {
		t.Errorf("cookie, no token: %d, want 403", code)
	}
	if code := pause(url.Values{"csrf": {tok[:len(tok)-2] + "AA"}}); code != http.StatusForbidden {
		t.Errorf("wrong token: %d, want 403", code)
	}
	if code := pause(url.Values{"csrf": {tok}}, "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden {
		t.Errorf("cross-site request with the token: %d, want 403", code)
	}
	if code := pause(url.Values{"csrf": {tok}}, "Origin", "https://evil.example"); code != http.StatusForbidden {
		t.Errorf("foreign Origin with the token: %d, want 403", code)
	}
	if f.task("report").Paused {
		t.Fatal("a refused request paused the task")
	}
	if code := pause(url.Values{"csrf": {tok}}, "Sec-Fetch-Site", "same-origin"); code != http.StatusSeeOther || !f.task("report").Paused {
		t.Errorf("same-origin request with the token: %d, want 303 and paused", code)
	}
	if _, cookies := f.headers("/tasks"); len(cookies) != 0 {
		t.Error("a page set a new CSRF cookie although the request had one")
	}
}

// TestRescheduleValidation: an invalid cron is refused with 422 and the
// reason, on the preview and on save, and nothing changes; a valid one
// shows its next fires before saving.
func TestRescheduleValidation(t *testing.T) {
	f := newFixture(t, Options{})
	for _, cron := range []string{"61 * * * *", "not a cron", "0 0 30 2 *", "CRON_TZ=Mars/Base * * * * *"} {
		code, body := f.get("/reschedule?name=report&cron=" + url.QueryEscape(cron))
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, `id="invalid"`) || strings.Contains(body, `id="save"`) {
			t.Errorf("preview %q: %d, want 422 with the reason and no save button", cron, code)
		}
	}
	if code, body := f.get("/reschedule?name=report&cron="); code != http.StatusUnprocessableEntity || !strings.Contains(body, "needs a cron") {
		t.Errorf("preview of an empty cron for a root task: %d", code)
	}
	if code, body := f.get("/reschedule?name=mail&cron="); code != http.StatusOK || strings.Contains(body, `id="invalid"`) {
		t.Errorf("preview of an empty cron for a child: %d", code)
	}
	code, body := f.get("/reschedule?name=report&cron=" + url.QueryEscape("0 30 9 * * 1-5"))
	if code != http.StatusOK || strings.Count(body, "<li>") != previewFires || !strings.Contains(body, "at 09:30 on Monday to Friday") {
		t.Errorf("valid preview: %d, want %d fires and the words:\n%s", code, previewFires, body)
	}
	tok := f.token()
	code, body = f.post(url.Values{"op": {"reschedule"}, "name": {"report"}, "cron": {"61 * * * *"}, "csrf": {tok}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "invalid cron") {
		t.Errorf("save of an invalid cron: %d:\n%s", code, body)
	}
	if got := f.task("report").Cron; got != "0 */5 * * * *" {
		t.Errorf("cron after a refused save: %q", got)
	}
}

// TestPartialRefresh: a refresh request gets the live part only.
func TestPartialRefresh(t *testing.T) {
	f := newFixture(t, Options{})
	for _, path := range []string{"/", "/tasks", "/task?name=report", "/nodes", "/audit"} {
		code, body := f.get(path, partialHeader, "1")
		if code != http.StatusOK || strings.Contains(body, "<html") || strings.Contains(body, `id="live"`) || len(body) < 100 {
			t.Errorf("partial %s: %d, %d bytes; want the live part alone", path, code, len(body))
		}
	}
}

// TestCachedReads: pages opened many times within one refresh interval
// cost the store the reads of one.
func TestCachedReads(t *testing.T) {
	f := newFixture(t, Options{})
	f.get("/")
	before := f.store.Calls()
	for range 20 {
		f.get("/", partialHeader, "1")
		f.get("/nodes", partialHeader, "1")
	}
	if n := f.store.Calls() - before; n != 0 {
		t.Errorf("40 refreshes within the interval made %d store calls, want 0", n)
	}
}

// TestMountPoint: the prefix comes from the request; it can never make a
// link or a redirect leave the site.
func TestMountPoint(t *testing.T) {
	for _, c := range []struct{ uri, seen, want string }{
		{"/tasks?q=1", "/tasks", ""},
		{"/ops/tasks", "/tasks", "/ops"},
		{"/ops/jobs/", "/", "/ops/jobs"},
		{"/ops/jobs/tasks", "tasks", "/ops/jobs"}, // StripPrefix("/ops/jobs/")
		{"//evil.example/tasks", "/tasks", "/evil.example"},
		{"http://host/ops/tasks", "/tasks", "/ops"},
		{"/elsewhere", "/tasks", ""},
	} {
		r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil)
		r.RequestURI = c.uri
		r.URL.Path, r.URL.RawPath = c.seen, ""
		if got := mountPoint(r); got != c.want {
			t.Errorf("mountPoint(%q seen as %q) = %q, want %q", c.uri, c.seen, got, c.want)
		}
	}
}

// TestCollisionBanner: the overview shows a banner naming a task that
// live nodes register with different code (two services in one group).
func TestCollisionBanner(t *testing.T) {
	f := newFixture(t, Options{})
	if _, body := f.get("/"); strings.Contains(body, "Task name collision") {
		t.Fatal("a banner without a collision")
	}
	for _, svc := range []string{"billing", "shipping"} {
		set, err := f.store.PublishTaskSet(f.ctx, repository.TaskSetEntries(map[string]string{"report": svc + ".Report"}))
		if err != nil {
			t.Fatal(err)
		}
		n, err := f.store.RegisterNode(f.ctx, "default", svc+"-1", 1)
		if err != nil {
			t.Fatal(err)
		}
		n.TaskSet = set
		if _, err := f.store.Heartbeat(f.ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	f.dash.clearCache()
	if _, body := f.get("/"); !strings.Contains(body, "Task name collision") || !strings.Contains(body, "billing.Report") ||
		!strings.Contains(body, "shipping.Report") {
		t.Fatalf("no collision banner naming both codes:\n%s", body)
	}
}

// TestTaskListPages walks the task list a page at a time: next after the
// last row, previous before the first, the count of all, and a filter
// kept across pages.
func TestTaskListPages(t *testing.T) {
	f := newFixture(t, Options{Refresh: time.Nanosecond})
	now, _ := f.store.Now(f.ctx)
	defs := make([]repository.TaskDef, 0, pageSize+10)
	for i := range pageSize + 10 {
		defs = append(defs, repository.TaskDef{Name: fmt.Sprintf("bulk-%03d", i), Cron: "0 0 * * * *", NextStartTime: now.Add(time.Hour)})
	}
	if _, err := f.store.UpsertTasks(f.ctx, "default", defs); err != nil {
		t.Fatal(err)
	}
	_, first := f.get("/tasks?q=bulk")
	last := fmt.Sprintf("bulk-%03d", pageSize-1)
	if n := strings.Count(first, `data-task="bulk-`); n != pageSize || !strings.Contains(first, `name="after" value="`+last+`" id="next-page"`) ||
		strings.Contains(first, `id="prev-page"`) || !strings.Contains(first, fmt.Sprintf(">%d tasks matching", pageSize+10)) {
		t.Fatalf("first page: %d rows, want %d, a next link after %s, no previous link and the count of all", n, pageSize, last)
	}
	_, second := f.get("/tasks?q=bulk&after=" + last)
	if n := strings.Count(second, `data-task="bulk-`); n != 10 || strings.Contains(second, `id="next-page"`) ||
		!strings.Contains(second, fmt.Sprintf(`name="before" value="bulk-%03d" id="prev-page"`, pageSize)) ||
		!strings.Contains(second, `form="tasks-filter"`) || !strings.Contains(second, `name="q" value="bulk"`) {
		t.Fatalf("second page: %d rows, want 10, a previous link and the search kept", n)
	}
	_, back := f.get(fmt.Sprintf("/tasks?q=bulk&before=bulk-%03d", pageSize))
	if !strings.Contains(back, `data-task="bulk-000"`) || strings.Contains(back, `id="prev-page"`) {
		t.Errorf("back to the first page: no bulk-000, or a previous link")
	}
}

// TestWhyPanel: the task page answers "what became of the fire at …"
// (?why=), says what was wrong with a question it cannot read, and the
// API's explain route answers the same in JSON.
func TestWhyPanel(t *testing.T) {
	f := newFixture(t, Options{})
	if _, body := f.get("/task?name=report&why=90m"); !strings.Contains(body, `id="why-verdict"`) {
		t.Errorf("task page with why=90m: no verdict\n%s", body)
	}
	if _, body := f.get("/task?name=report&why=yesterday"); !strings.Contains(body, `id="why-error"`) {
		t.Errorf("task page with why=yesterday: no error said")
	}
	code, body := f.get("/api/v1/tasks/report/explain?at=2026-11-26T10:00:00Z")
	var x easyjob.Explanation
	if err := json.Unmarshal([]byte(body), &x); code != http.StatusOK || err != nil || x.Fire == nil || x.Fire.Verdict == "" || len(x.Next) == 0 {
		t.Errorf("GET explain: %d %v %+v", code, err, x)
	}
	if code, _ := f.get("/api/v1/tasks/report/explain?at=soon"); code != http.StatusBadRequest {
		t.Errorf("GET explain?at=soon: %d, want 400", code)
	}
}

// TestCalendarsPage lists the group's calendars and their rules.
func TestCalendarsPage(t *testing.T) {
	f := newFixture(t, Options{Refresh: time.Nanosecond}) // nothing cached
	if _, body := f.get("/calendars"); !strings.Contains(body, "No calendar yet.") {
		t.Errorf("calendars page of a group without one:\n%s", body)
	}
	if _, err := f.client.SetCalendar(f.ctx, easyjob.ExclusionCalendar{Name: "fr", Dates: []string{"2026-12-25"}, Crons: []string{"* * * * 0,6"}, Note: "closed"}); err != nil {
		t.Fatal(err)
	}
	_, body := f.get("/calendars")
	for _, want := range []string{`data-calendar="fr"`, "<code>2026-12-25</code>", "<code>* * * * 0,6</code>", "closed", `class="on">Calendars`} {
		if !strings.Contains(body, want) {
			t.Errorf("calendars page: no %q", want)
		}
	}
}

// TestForecastPage draws the fires per minute of the fixture's schedules
// (report every 5 minutes, the script-named task every 10 s, orphan
// daily; the chain step mail runs after report and is left out) and
// lists the peak seconds; a horizon out of range is refused.
func TestForecastPage(t *testing.T) {
	f := newFixture(t, Options{})
	code, body := f.get("/forecast")
	if code != http.StatusOK {
		t.Fatalf("GET /forecast: %d\n%s", code, body)
	}
	for _, want := range []string{
		`<b>8929</b> fires of <b>3</b> schedules`, // 288 + 8640 + 1 in any 24 h
		`<svg viewBox="0 -14 1440 140"`, `id="forecast-peaks"`, `class="on">Forecast`, "fires in 1m",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("forecast page: no %q", want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("forecast page: a task name unescaped")
	}
	if hd, _ := f.headers("/forecast"); hd.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("forecast page: Content-Type %q", hd.Get("Content-Type"))
	}
	if code, body := f.get("/forecast?hours=168"); code != http.StatusOK || !strings.Contains(body, `class="on">168 h`) {
		t.Errorf("GET /forecast?hours=168: %d", code)
	}
	if code, _ := f.get("/forecast?hours=0"); code != http.StatusBadRequest {
		t.Errorf("GET /forecast?hours=0: %d, want 400", code)
	}
}

// TestTaskRowSpreadFires: the fires a task row lists after the next one
// keep a spread task's offset.
func TestTaskRowSpreadFires(t *testing.T) {
	next := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC).Add(easyjob.SpreadOffset("s", time.Hour))
	row := newTaskRow(TaskView{
		TaskInfo: easyjob.TaskInfo{Name: "s", Cron: "0 * * * *", NextStartTime: next, Status: repository.TaskPending},
		Options:  repository.TaskOptions{Spread: time.Hour},
	}, snapshot{}, 2)
	if len(row.Next) != 3 || !row.Next[1].Equal(next.Add(time.Hour)) || !row.Next[2].Equal(next.Add(2*time.Hour)) {
		t.Errorf("fires %v, want %v and the two an hour apart after it", row.Next, next)
	}
}
