package dashboard

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// xssName is a task name that must never reach a page unescaped.
const xssName = `<script>alert("x")</script>`

// fixture is a dashboard mounted under /ops/ on a memory store holding a
// small group: a chain report → mail, a task named like a script, a stale
// task no node registers, one live node and a few runs.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	store  *memory.Store
	client *easyjob.Client
	dash   *Handler
	srv    *httptest.Server
	http   *http.Client
	node   repository.Node
}

func newFixture(t *testing.T, o Options) *fixture {
	t.Helper()
	ctx := t.Context()
	f := &fixture{t: t, ctx: ctx, store: memory.New()}
	now, _ := f.store.Now(ctx)
	_, err := f.store.UpsertTasks(ctx, "default", []repository.TaskDef{
		{Name: "report", Cron: "0 */5 * * * *", NextStartTime: now.Add(-time.Second)},
		{Name: "mail", Parent: "report"},
		{Name: xssName, Cron: "*/10 * * * * *", NextStartTime: now.Add(time.Hour)},
		{Name: "orphan", Cron: "0 0 3 * * *", NextStartTime: now.Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	set, err := f.store.PublishTaskSet(ctx, []string{"report", "mail", xssName})
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.store.RegisterNode(ctx, "default", "node-a", 1)
	if err != nil {
		t.Fatal(err)
	}
	n.TaskSet = set
	if f.node, err = f.store.Heartbeat(ctx, n); err != nil {
		t.Fatal(err)
	}
	f.run("report", repository.ExecFailed, "<b>boom</b>")
	f.run("report", repository.ExecSucceeded, "")

	f.client, err = easyjob.NewClient(ctx, easyjob.Config{Store: f.store, HeartbeatInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.client.Close() })
	f.dash = New(f.client, o)
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", f.dash))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	jar, _ := cookiejar.New(nil)
	f.http = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return f
}

// run records one finished run of the root task name on the fixture's
// node, which keeps the claim for a fire a minute later. The run's kind is
// the one a node gives it (manual after a trigger, else cron).
func (f *fixture) run(name string, st repository.ExecStatus, errText string) {
	f.t.Helper()
	t, err := f.store.Task(f.ctx, "default", name)
	if err != nil {
		f.t.Fatal(err)
	}
	if t.Status != repository.TaskDoing {
		won, err := f.store.Claim(f.ctx, f.node.ID, []repository.TaskRef{t.Ref()})
		if err != nil || len(won) != 1 {
			f.t.Fatalf("claim %s: %v %v", name, won, err)
		}
		t = won[0]
	}
	x, err := f.store.StartExecution(f.ctx, t.Claim(), repository.Execution{ScheduledAt: t.NextStartTime, Attempt: 1, Kind: repository.KindOf(t, "")})
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := f.store.Finish(f.ctx, []repository.Finish{{
		Claim: t.Claim(), ExecutionID: x.ID, Status: st, Error: errText,
		Next: t.NextStartTime.Add(time.Minute), NextAttempt: 1, Cron: t.Cron, Revision: t.Revision, Keep: true,
	}})
	if err != nil || res[0].Err != nil {
		f.t.Fatalf("finish %s: %v %v", name, res, err)
	}
}

// get fetches path (under /ops) and returns the status and body.
func (f *fixture) get(path string, header ...string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.ctx, http.MethodGet, f.srv.URL+"/ops"+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return f.do(req)
}

// headers fetches path (under /ops) and returns the response's headers
// and the cookies it sets.
func (f *fixture) headers(path string) (http.Header, []*http.Cookie) {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.ctx, http.MethodGet, f.srv.URL+"/ops"+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := f.http.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	return res.Header, res.Cookies()
}

// post submits form to /ops/action and returns the status and body.
func (f *fixture) post(form url.Values, header ...string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.ctx, http.MethodPost, f.srv.URL+"/ops/action", strings.NewReader(form.Encode()))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return f.do(req)
}

func (f *fixture) do(req *http.Request) (int, string) {
	f.t.Helper()
	res, err := f.http.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// token returns the CSRF token the cookie jar holds after a page view.
func (f *fixture) token() string {
	f.t.Helper()
	if code, _ := f.get("/tasks"); code != http.StatusOK {
		f.t.Fatalf("GET /tasks: %d", code)
	}
	u, _ := url.Parse(f.srv.URL + "/ops/")
	for _, c := range f.http.Jar.Cookies(u) {
		if c.Name == csrfCookie {
			return c.Value
		}
	}
	f.t.Fatal("no CSRF cookie after a page view")
	return ""
}

// task reads a task through the client.
func (f *fixture) task(name string) easyjob.TaskInfo {
	f.t.Helper()
	t, err := f.client.Task(f.ctx, name)
	if err != nil {
		f.t.Fatal(err)
	}
	return t
}

// newRequest is a request to a handler served at the root.
func newRequest(t *testing.T, method, path, body string) *http.Request {
	t.Helper()
	return httptest.NewRequestWithContext(t.Context(), method, path, strings.NewReader(body))
}

// serve runs one request through h.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}
