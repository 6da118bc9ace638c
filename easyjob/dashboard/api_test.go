package dashboard

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
	"github.com/easyjob-go/easyjob/repository/storetest"
)

// apiFixture is the API mounted under /svc on a store with one echo node.
type apiFixture struct {
	t      *testing.T
	client *easyjob.Client
	node   *echoNode
	srv    *httptest.Server
}

// apiStores are the stores the API tests run on.
var apiStores = []struct {
	name string
	open func(t *testing.T) repository.Store
}{
	{"memory", func(*testing.T) repository.Store { return memory.New() }},
	{"postgres", func(t *testing.T) repository.Store { return pgtest.NewStore(t) }},
}

// eachStore runs test on every store of apiStores.
func eachStore(t *testing.T, test func(t *testing.T, store repository.Store)) {
	for _, s := range apiStores {
		t.Run(s.name, func(t *testing.T) { test(t, s.open(t)) })
	}
}

func newAPIFixture(t *testing.T, store repository.Store, o Options) *apiFixture {
	t.Helper()
	f := &apiFixture{t: t, node: startEchoNode(t, store, "api")}
	var err error
	// A generous LiveAfter: a node slowed down by the race detector still
	// counts as live.
	f.client, err = easyjob.NewClient(t.Context(), easyjob.Config{
		Store: store, Group: "api", SkipMigrate: true,
		HeartbeatInterval: 200 * time.Millisecond, LiveAfter: 10 * time.Second, DeadAfter: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.client.Close() })
	waitForEcho(t, f.client)
	f.srv = httptest.NewServer(http.StripPrefix("/svc", NewAPI(f.client, o)))
	t.Cleanup(f.srv.Close)
	return f
}

// call sends method path (under /svc/api/v1) with body as JSON and
// header's pairs; it returns the status, the headers and the body.
func (f *apiFixture) call(method, path, body string, header ...string) (int, http.Header, string) {
	f.t.Helper()
	h := []string{"Content-Type", "application/json"}
	return f.raw(method, path, body, append(h, header...)...)
}

// raw is call without the JSON content type.
func (f *apiFixture) raw(method, path, body string, header ...string) (int, http.Header, string) {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.t.Context(), method, f.srv.URL+"/svc/api/v1"+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		f.t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	return res.StatusCode, res.Header, string(b)
}

// want sends a request and checks its status; it decodes the body into
// out (when not nil).
func (f *apiFixture) want(status int, out any, method, path, body string, header ...string) {
	f.t.Helper()
	code, _, got := f.call(method, path, body, header...)
	if code != status {
		f.t.Fatalf("%s %s %s: %d, want %d:\n%s", method, path, body, code, status, got)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(got), out); err != nil {
			f.t.Fatalf("%s %s: %v:\n%s", method, path, err, got)
		}
	}
}

// refused checks that a request answers status with code, saying says.
func (f *apiFixture) refused(status int, code, says string, method, path, body string, header ...string) {
	f.t.Helper()
	got, _, raw := f.call(method, path, body, header...)
	var e errorJSON
	if err := json.Unmarshal([]byte(raw), &e); err != nil || got != status || e.Code != code || !strings.Contains(e.Error, says) {
		f.t.Errorf("%s %s %.80s: %d %s; want %d, code %q saying %q", method, path, body, got, raw, status, code, says)
	}
}

// exists reports whether the group has task name.
func (f *apiFixture) exists(name string) bool {
	f.t.Helper()
	_, err := f.client.Task(f.t.Context(), name)
	return err == nil
}

// auditLen counts the group's audit entries.
func (f *apiFixture) auditLen() int {
	f.t.Helper()
	es, err := f.client.Audit(f.t.Context(), easyjob.AuditFilter{Limit: 1000})
	if err != nil {
		f.t.Fatal(err)
	}
	return len(es)
}

// apiTaskOut is a task as a client of the API reads it.
type apiTaskOut struct {
	Name, Handler, Cron, Status string
	Dynamic, Paused, Stale      bool
	Waiting                     bool
	Args                        json.RawMessage
	Revision                    int64
	Timeout                     string
	RetryBackoff                string `json:"retry_backoff"`
	MaxRetries                  int    `json:"max_retries"`
	Misfire                     *struct{ Policy, Threshold string }
	Overlap                     string
	OverlapGrace                string `json:"overlap_grace"`
	MaxFires                    int64  `json:"max_fires"`
}

// TestAPISchedules walks a schedule through the API on both stores:
// created, read, triggered with its own args (the run shows them and its
// kind), updated, paused, resumed, removed; each step in the audit log
// under the request's user, via "api".
func TestAPISchedules(t *testing.T) {
	eachStore(t, func(t *testing.T, store repository.Store) {
		f := newAPIFixture(t, store, Options{Actor: func(r *http.Request) string { return r.Header.Get("X-User") }})
		user := []string{"X-User", "ada"}

		code, hd, body := f.call(http.MethodPost, "/tasks",
			`{"name": "e1", "handler": "echo", "cron": "0 0 0 1 1 *", "args": {"n": 1}, "timeout": "30s", "max_retries": 2, "misfire": {"policy": "skip"}}`, user...)
		var created apiTaskOut
		if err := json.Unmarshal([]byte(body), &created); err != nil || code != http.StatusCreated {
			t.Fatalf("create: %d %v:\n%s", code, err, body)
		}
		if loc := hd.Get("Location"); loc != "/svc/api/v1/tasks/e1" {
			t.Errorf("Location %q", loc)
		}
		if !created.Dynamic || created.Handler != "echo" || compactJSON(created.Args) != `{"n":1}` || created.Revision < 1 ||
			created.Timeout != "30s" || created.MaxRetries != 2 || created.Misfire == nil || created.Misfire.Policy != "skip" {
			t.Errorf("created %+v", created)
		}
		var got apiTaskOut
		f.want(http.StatusOK, &got, http.MethodGet, "/tasks/e1", "")
		if got.Name != "e1" || got.Timeout != "30s" || got.Revision != created.Revision || got.Stale {
			t.Errorf("GET e1: %+v", got)
		}
		var list struct {
			Tasks []apiTaskOut
			Total int
		}
		f.want(http.StatusOK, &list, http.MethodGet, "/tasks?q=E1", "")
		if list.Total != 1 || len(list.Tasks) != 1 || list.Tasks[0].Name != "e1" || list.Tasks[0].Timeout != "30s" {
			t.Errorf("GET /tasks?q=E1: %+v", list)
		}

		// Triggered with its own args: the run has them, and kind manual.
		var trig apiTaskOut
		f.want(http.StatusAccepted, &trig, http.MethodPost, "/tasks/e1/trigger", `{"args": {"n": 2}}`, user...)
		waitUntil(t, "the triggered run with n=2", func() bool { return f.node.saw(2) })
		var runs struct {
			Runs []easyjob.ExecutionInfo
		}
		waitUntil(t, "the run in the history", func() bool {
			f.want(http.StatusOK, &runs, http.MethodGet, "/tasks/e1/history?status=succeeded", "")
			return len(runs.Runs) > 0
		})
		if r := runs.Runs[0]; r.Kind != easyjob.RunManual || compactJSON(r.Args) != `{"n":2}` || r.Revision != created.Revision {
			t.Errorf("the triggered run: %+v", r)
		}

		// Updated: the whole definition replaced, a new revision.
		var upd apiTaskOut
		f.want(http.StatusOK, &upd, http.MethodPut, "/tasks/e1", `{"handler": "echo", "cron": "0 0 0 1 2 *", "args": {"n": 3}}`, user...)
		if upd.Revision <= created.Revision || compactJSON(upd.Args) != `{"n":3}` || upd.Cron != "0 0 0 1 2 *" || upd.Timeout != "" || upd.MaxRetries != 0 {
			t.Errorf("updated: %+v", upd)
		}
		var paused, resumed apiTaskOut
		f.want(http.StatusOK, &paused, http.MethodPost, "/tasks/e1/pause", "", user...)
		f.want(http.StatusOK, &resumed, http.MethodPost, "/tasks/e1/resume", "{}", user...)
		if !paused.Paused || resumed.Paused {
			t.Errorf("pause, resume: %v, %v", paused.Paused, resumed.Paused)
		}

		// A name with a slash, path-escaped.
		f.want(http.StatusCreated, nil, http.MethodPost, "/tasks", `{"name": "team/e2", "handler": "echo", "cron": "@every 1h"}`, user...)
		f.want(http.StatusOK, &got, http.MethodGet, "/tasks/"+url.PathEscape("team/e2"), "")
		if got.Name != "team/e2" {
			t.Errorf("GET team%%2Fe2: %+v", got)
		}

		var nodes struct{ Nodes []easyjob.NodeInfo }
		f.want(http.StatusOK, &nodes, http.MethodGet, "/nodes", "")
		if len(nodes.Nodes) != 1 || !nodes.Nodes[0].Live || nodes.Nodes[0].Name != "echo-node" {
			t.Errorf("nodes: %+v", nodes)
		}
		var hs struct{ Handlers []easyjob.HandlerInfo }
		f.want(http.StatusOK, &hs, http.MethodGet, "/handlers", "")
		if len(hs.Handlers) != 1 || hs.Handlers[0].Kind != "echo" || !hs.Handlers[0].Live || !strings.Contains(string(hs.Handlers[0].Schema), `"n"`) {
			t.Errorf("handlers: %+v", hs)
		}

		var rm struct{ Removed []apiTaskOut }
		f.want(http.StatusOK, &rm, http.MethodDelete, "/tasks/e1", "", user...)
		if len(rm.Removed) != 1 || rm.Removed[0].Name != "e1" {
			t.Errorf("removed: %+v", rm)
		}
		f.refused(http.StatusNotFound, codeNotFound, `"e1"`, http.MethodGet, "/tasks/e1", "")
		f.want(http.StatusOK, &runs, http.MethodGet, "/tasks/e1/history", "") // kept

		var audit struct {
			Entries      []easyjob.AuditEntry
			NextBeforeID int64 `json:"next_before_id"`
		}
		f.want(http.StatusOK, &audit, http.MethodGet, "/audit?task=e1", "")
		var actions []string
		for _, e := range audit.Entries {
			if e.Name != "ada" || e.Via != "api" || e.From != "127.0.0.1" {
				t.Errorf("audit entry %+v: want ada via api from 127.0.0.1", e)
			}
			actions = append(actions, e.Action)
		}
		if want := "remove resume pause update trigger create"; strings.Join(actions, " ") != want {
			t.Errorf("audit actions %v, want %s", actions, want)
		}
		f.want(http.StatusOK, &audit, http.MethodGet, "/audit?task=e1&limit=2", "")
		if len(audit.Entries) != 2 || audit.NextBeforeID != audit.Entries[1].ID {
			t.Errorf("audit page of 2: %+v", audit)
		}
	})
}

// TestAPIRefusals: invalid schedules, args, requests and content types
// are refused with their code and status, and nothing is written.
func TestAPIRefusals(t *testing.T) {
	eachStore(t, func(t *testing.T, store repository.Store) {
		f := newAPIFixture(t, store, Options{})
		past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
		for _, c := range []struct {
			status     int
			code, says string
			body       string
		}{
			{400, codeInvalidArgs, `args.n`, `{"name": "x", "handler": "echo", "cron": "* * * * *", "args": {"n": "x"}}`},
			{400, codeInvalidArgs, `unknown field "m"`, `{"name": "x", "handler": "echo", "cron": "* * * * *", "args": {"m": 1}}`},
			{409, codeUnknownHandler, `handler "nope"`, `{"name": "x", "handler": "nope", "cron": "* * * * *"}`},
			{400, codeInvalidCron, `schedule "x"`, `{"name": "x", "handler": "echo", "cron": "61 * * * *"}`},
			{400, codeInvalidCron, `needs a cron`, `{"name": "x", "handler": "echo"}`},
			{400, codeInvalidCron, `not both`, `{"name": "x", "handler": "echo", "cron": "* * * * *", "at": "2099-01-01T00:00:00Z"}`},
			{400, codeInvalidCron, `has passed`, `{"name": "x", "handler": "echo", "at": "` + past + `"}`},
			{400, codeInvalidName, `schedule`, `{"name": " x", "handler": "echo", "cron": "* * * * *"}`},
			{400, codeInvalidOption, `misfire policy "never"`, `{"name": "x", "handler": "echo", "cron": "* * * * *", "misfire": {"policy": "never"}}`},
			{400, codeInvalidOption, `catch_up >= 1`, `{"name": "x", "handler": "echo", "cron": "* * * * *", "misfire": {"policy": "catch_up"}}`},
			{400, codeInvalidOption, `Mars/Base`, `{"name": "x", "handler": "echo", "cron": "* * * * *", "timezone": "Mars/Base"}`},
			{400, codeInvalidOption, `Timeout`, `{"name": "x", "handler": "echo", "cron": "* * * * *", "timeout": "-1s"}`},
			{400, codeRequest, `duration "soon"`, `{"name": "x", "handler": "echo", "cron": "* * * * *", "timeout": "soon"}`},
			{400, codeRequest, `max_retries: want an integer, got string`, `{"name": "x", "handler": "echo", "cron": "* * * * *", "max_retries": "2"}`},
			{400, codeRequest, `want an object, got number`, `[1]`},
			{400, codeRequest, `unknown field "crom"`, `{"name": "x", "handler": "echo", "crom": "* * * * *"}`},
			{400, codeRequest, `invalid JSON`, `{"name": "x", `},
			{400, codeRequest, `after the value`, `{"name": "x", "handler": "echo", "cron": "* * * * *"} {}`},
			{400, codeRequest, `object`, `"x"`},
			{400, codeRequest, `empty batch`, `[]`},
			{413, codeTooLarge, `bounded`, `{"name": "x", "handler": "echo", "cron": "* * * * *", "args": {"s": "` + strings.Repeat("a", maxBody) + `"}}`},
		} {
			f.refused(c.status, c.code, c.says, http.MethodPost, "/tasks", c.body)
		}
		// Not JSON: refused before anything is read.
		good := `{"name": "x", "handler": "echo", "cron": "0 0 0 1 1 *"}`
		for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
			var h []string
			if ct != "" {
				h = []string{"Content-Type", ct}
			}
			if code, _, body := f.raw(http.MethodPost, "/tasks", good, h...); code != http.StatusUnsupportedMediaType || !strings.Contains(body, codeMediaType) {
				t.Errorf("POST /tasks as %q: %d %s, want 415", ct, code, body)
			}
		}
		if f.exists("x") || f.auditLen() != 0 {
			t.Fatalf("a refused create wrote: x exists %v, %d audit entries", f.exists("x"), f.auditLen())
		}
		if code, _, _ := f.call(http.MethodPost, "/tasks", good, "Content-Type", "application/json; charset=utf-8"); code != http.StatusCreated {
			t.Fatalf("create with a charset: %d", code)
		}

		f.refused(409, codeExists, `"x"`, http.MethodPost, "/tasks", good)
		f.refused(400, codeInvalidArgs, `args.n`, http.MethodPost, "/tasks/x/trigger", `{"args": {"n": "x"}}`)
		f.refused(400, codeInvalidArgs, `want object`, http.MethodPost, "/tasks/x/trigger", `{"args": [1]}`)
		f.refused(400, codeRequest, `unknown field`, http.MethodPost, "/tasks/x/trigger", `{"argz": {}}`)
		f.refused(404, codeNotFound, `"nope"`, http.MethodPost, "/tasks/nope/trigger", ``)
		f.refused(409, codeNotRunning, `not running`, http.MethodPost, "/tasks/yearly/cancel", ``)
		f.refused(404, codeNotFound, `"nope"`, http.MethodPost, "/tasks/nope/cancel", ``)
		f.refused(409, codeNotDynamic, `yearly`, http.MethodPut, "/tasks/yearly", `{"handler": "echo", "cron": "* * * * *"}`)
		f.refused(400, codeRequest, `renamed`, http.MethodPut, "/tasks/x", `{"name": "y", "handler": "echo", "cron": "* * * * *"}`)
		f.refused(404, codeNotFound, `"nope"`, http.MethodPut, "/tasks/nope", `{"handler": "echo", "cron": "* * * * *"}`)
		f.refused(404, codeNotFound, `"nope"`, http.MethodDelete, "/tasks/nope", ``)
		f.refused(409, codeInUse, `register it`, http.MethodDelete, "/tasks/yearly", ``)
		f.refused(400, codeRequest, `force`, http.MethodDelete, "/tasks/x?force=maybe", ``)
		f.refused(404, codeNotFound, `"nope"`, http.MethodPost, "/tasks/nope/pause", ``)
		f.refused(400, codeRequest, `status "bogus"`, http.MethodGet, "/tasks/x/history?status=bogus", ``)
		f.refused(400, codeRequest, `limit`, http.MethodGet, "/tasks/x/history?limit=0", ``)
		f.refused(400, codeRequest, `before_id`, http.MethodGet, "/audit?before_id=x", ``)
		f.refused(400, codeRequest, `since`, http.MethodGet, "/audit?since=yesterday", ``)
		f.refused(400, codeRequest, `show "bogus"`, http.MethodGet, "/tasks?show=bogus", ``)
		f.refused(404, codeNotFound, `no such endpoint`, http.MethodGet, "/nope", ``)
		f.refused(403, codeForbidden, `cross-origin`, http.MethodPost, "/tasks/x/pause", ``, "Sec-Fetch-Site", "cross-site")
		if code, hd, _ := f.call(http.MethodPatch, "/tasks/x", `{}`); code != http.StatusMethodNotAllowed || hd.Get("Allow") != "GET, PUT, DELETE" {
			t.Errorf("PATCH /tasks/x: %d, Allow %q; want 405 with GET, PUT, DELETE", code, hd.Get("Allow"))
		}
		if code, hd, _ := f.call(http.MethodGet, "/tasks/x/pause", ``); code != http.StatusMethodNotAllowed || hd.Get("Allow") != "POST" {
			t.Errorf("GET /tasks/x/pause: %d, Allow %q; want 405 with POST", code, hd.Get("Allow"))
		}
		if xs, _ := f.client.History(t.Context(), "x", easyjob.HistoryFilter{}); len(xs) != 0 {
			t.Errorf("refused triggers ran: %+v", xs)
		}
		if ti, _ := f.client.Task(t.Context(), "x"); ti.Paused || ti.TriggerRequested || ti.Revision != 1 {
			t.Errorf("refused writes changed x: %+v", ti)
		}
		if n := f.auditLen(); n != 1 {
			t.Errorf("%d audit entries, want the create alone", n)
		}

		// An unknown handler, allowed: created, waiting (not stale).
		var w apiTaskOut
		f.want(http.StatusCreated, &w, http.MethodPost, "/tasks", `{"name": "w", "handler": "later", "cron": "* * * * *", "allow_unknown": true}`)
		if !w.Waiting || w.Stale {
			t.Errorf("created with an unknown handler: %+v, want waiting and not stale", w)
		}
		var list struct{ Tasks []apiTaskOut }
		f.want(http.StatusOK, &list, http.MethodGet, "/tasks", "")
		for _, x := range list.Tasks {
			if x.Waiting != (x.Name == "w") || x.Stale {
				t.Errorf("listed %s: waiting %v, stale %v", x.Name, x.Waiting, x.Stale)
			}
		}
	})
}

// TestAPIForbidden: CanAct false (or ReadOnly) refuses every write with
// 403 before anything is read or written; reads are served.
func TestAPIForbidden(t *testing.T) {
	store := memory.New()
	f := newAPIFixture(t, store, Options{CanAct: func(r *http.Request) bool { return r.Header.Get("X-Role") == "operator" }})
	ro := httptest.NewServer(http.StripPrefix("/svc", NewAPI(f.client, Options{ReadOnly: true})))
	t.Cleanup(ro.Close)
	f.want(http.StatusCreated, nil, http.MethodPost, "/tasks", `{"name": "x", "handler": "echo", "cron": "0 0 0 1 1 *"}`, "X-Role", "operator")
	writes := []struct{ method, path, body string }{
		{http.MethodPost, "/tasks", `{"name": "y", "handler": "echo", "cron": "* * * * *"}`},
		{http.MethodPost, "/tasks", `[{"name": "y", "handler": "echo", "cron": "* * * * *"}]`},
		{http.MethodPut, "/tasks/x", `{"handler": "echo", "cron": "* * * * *"}`},
		{http.MethodDelete, "/tasks/x?force=true", ``},
		{http.MethodPost, "/tasks/x/pause", ``},
		{http.MethodPost, "/tasks/x/resume", ``},
		{http.MethodPost, "/tasks/x/trigger", `{"args": {"n": 1}}`},
	}
	for _, w := range writes {
		f.refused(http.StatusForbidden, codeForbidden, "may not act", w.method, w.path, w.body)
		roF := &apiFixture{t: t, srv: ro}
		roF.refused(http.StatusForbidden, codeForbidden, "read-only", w.method, w.path, w.body, "X-Role", "operator")
	}
	ti, err := f.client.Task(t.Context(), "x")
	if err != nil || ti.Paused || ti.TriggerRequested || ti.Revision != 1 || f.exists("y") || f.auditLen() != 1 {
		t.Errorf("refused writes wrote: %+v %v, y %v, %d audit entries", ti, err, f.exists("y"), f.auditLen())
	}
	for _, path := range []string{"/tasks", "/tasks/x", "/tasks/x/history", "/nodes", "/handlers", "/audit"} {
		f.want(http.StatusOK, nil, http.MethodGet, path, "")
	}
}

// TestAPIBatch: a batch create is all or nothing, bounded, on both stores,
// and reads back none of the group's other tasks.
func TestAPIBatch(t *testing.T) {
	eachStore(t, func(t *testing.T, store repository.Store) {
		f := newAPIFixture(t, storetest.NoWholeGroupReads(t, store), Options{})
		item := func(name, extra string) string {
			return fmt.Sprintf(`{"name": %q, "handler": "echo", "cron": "0 0 * * *"%s}`, name, extra)
		}
		batch := func(items ...string) string { return "[" + strings.Join(items, ", ") + "]" }
		f.refused(400, codeInvalidArgs, `"b2"`, http.MethodPost, "/tasks", batch(item("b1", ""), item("b2", `, "args": {"n": "x"}`)))
		f.refused(409, codeExists, `yearly`, http.MethodPost, "/tasks", batch(item("b1", ""), item("yearly", "")))
		f.refused(409, codeExists, `given twice`, http.MethodPost, "/tasks", batch(item("b1", ""), item("b1", "")))
		f.refused(400, codeInvalidOption, `batch item 1: schedule "b2"`, http.MethodPost, "/tasks", batch(item("b1", ""), item("b2", `, "misfire": {"policy": "later"}`)))
		f.refused(400, codeRequest, `allow_unknown`, http.MethodPost, "/tasks", batch(item("b1", ""), item("b2", `, "allow_unknown": true`)))
		big := make([]string, maxBatch+1)
		for i := range big {
			big[i] = item(fmt.Sprintf("b%05d", i), "")
		}
		f.refused(413, codeTooLarge, `at most 10000`, http.MethodPost, "/tasks", batch(big...))
		if f.exists("b1") || f.exists("b00000") || f.auditLen() != 0 {
			t.Fatalf("a refused batch wrote: b1 %v, b00000 %v, %d audit entries", f.exists("b1"), f.exists("b00000"), f.auditLen())
		}

		var out struct {
			Tasks []apiTaskOut
			Total int
		}
		f.want(http.StatusCreated, &out, http.MethodPost, "/tasks", batch(item("b1", `, "args": {"n": 1}`), item("b2", `, "timeout": 90`), item("b3", `, "paused": true`)))
		if out.Total != 3 || len(out.Tasks) != 3 || out.Tasks[0].Name != "b1" || out.Tasks[1].Timeout != "1m30s" || !out.Tasks[2].Paused {
			t.Errorf("batch created %+v", out)
		}
		for _, n := range []string{"b1", "b2", "b3"} {
			if !f.exists(n) {
				t.Errorf("%s not created", n)
			}
		}
	})
}

// TestAPIInDashboard: the dashboard serves the API under its mount
// point; a write through it shows on the pages at once and is recorded
// via "api".
func TestAPIInDashboard(t *testing.T) {
	f := newFixture(t, Options{})
	if code, body := f.get("/tasks"); code != http.StatusOK || strings.Contains(body, "status paused") {
		t.Fatalf("GET /tasks: %d", code)
	}
	var list struct{ Tasks []apiTaskOut }
	code, body := f.get("/api/v1/tasks")
	if err := json.Unmarshal([]byte(body), &list); err != nil || code != http.StatusOK || len(list.Tasks) != 4 {
		t.Fatalf("GET /ops/api/v1/tasks: %d %v:\n%s", code, err, body)
	}
	// A name with a slash and markup, path-escaped under the prefix.
	if code, body := f.get("/api/v1/tasks/" + url.PathEscape(xssName)); code != http.StatusOK || !strings.Contains(body, `"name":"\u003cscript\u003ealert(\"x\")\u003c/script\u003e"`) {
		t.Errorf("GET the script-like task: %d:\n%s", code, body)
	}
	req, _ := http.NewRequestWithContext(f.ctx, http.MethodPost, f.srv.URL+"/ops/api/v1/tasks/orphan/pause", nil)
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("carol", "pw")
	if code, body := f.do(req); code != http.StatusOK {
		t.Fatalf("pause through the API: %d:\n%s", code, body)
	}
	if _, body := f.get("/task?name=orphan"); !strings.Contains(body, `value="resume"`) {
		t.Error("the task page does not show the API's pause at once")
	}
	if e := f.lastAudit(); e.Name != "carol" || e.Via != "api" || e.Action != "pause" {
		t.Errorf("audit entry %+v, want carol's pause via api", e)
	}
	// A form post to the API is refused: no JSON, no write.
	req, _ = http.NewRequestWithContext(f.ctx, http.MethodPost, f.srv.URL+"/ops/api/v1/tasks/orphan/resume", strings.NewReader("x=1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if code, _ := f.do(req); code != http.StatusUnsupportedMediaType || !f.task("orphan").Paused {
		t.Errorf("a form post to the API: %d, paused %v", code, f.task("orphan").Paused)
	}
}

// TestAPICalendars: put, list and remove an exclusion calendar; a
// schedule names it; bad rules and unknown names answer their codes.
func TestAPICalendars(t *testing.T) {
	eachStore(t, func(t *testing.T, store repository.Store) {
		f := newAPIFixture(t, store, Options{})
		var put easyjob.ExclusionCalendar
		f.want(http.StatusOK, &put, http.MethodPut, "/calendars/weekends", `{"crons": ["* * * * 0,6"], "note": "closed"}`)
		if put.Name != "weekends" || put.UpdatedAt.IsZero() {
			t.Fatalf("PUT answered %+v", put)
		}
		var list calendarList
		f.want(http.StatusOK, &list, http.MethodGet, "/calendars", "")
		if len(list.Calendars) != 1 || list.Calendars[0].Note != "closed" {
			t.Fatalf("GET /calendars = %+v", list)
		}
		f.refused(http.StatusBadRequest, codeInvalidCalendar, "2026-02-30", http.MethodPut, "/calendars/bad", `{"dates": ["2026-02-30"]}`)
		f.refused(http.StatusBadRequest, codeRequest, "the body names", http.MethodPut, "/calendars/a", `{"name": "b", "dates": ["2026-01-01"]}`)
		f.want(http.StatusCreated, nil, http.MethodPost, "/tasks", `{"name": "weekdays", "handler": "echo", "cron": "0 0 9 * * *", "args": {"n": 1}, "calendar": "weekends"}`)
		f.refused(http.StatusNotFound, codeNotFound, "nope", http.MethodPost, "/tasks", `{"name": "x", "handler": "echo", "cron": "0 0 9 * * *", "args": {"n": 1}, "calendar": "nope"}`)
		f.want(http.StatusOK, nil, http.MethodDelete, "/calendars/weekends", "")
		f.refused(http.StatusNotFound, codeNotFound, "weekends", http.MethodDelete, "/calendars/weekends", "")
	})
}

// TestAPIForecast: GET /forecast counts the fires of the group's
// schedules over the hours asked, the storm's second at the top and the
// spread schedules' fires each at its own offset; a schedule's spread
// reads back.
func TestAPIForecast(t *testing.T) {
	eachStore(t, func(t *testing.T, store repository.Store) {
		f := newAPIFixture(t, store, Options{})
		for i := range 4 {
			f.want(http.StatusCreated, nil, http.MethodPost, "/tasks", fmt.Sprintf(`{"name": "storm%d", "handler": "echo", "cron": "0 0 * * * *", "args": {"n": 1}}`, i))
			f.want(http.StatusCreated, nil, http.MethodPost, "/tasks", fmt.Sprintf(`{"name": "spread%d", "handler": "echo", "cron": "0 0 * * * *", "args": {"n": 1}, "spread": "1h"}`, i))
		}
		var task struct{ Spread string }
		f.want(http.StatusOK, &task, http.MethodGet, "/tasks/spread0", "")
		if task.Spread != "1h0m0s" {
			t.Errorf("spread reads back %q, want 1h0m0s", task.Spread)
		}
		var fc struct {
			From      time.Time
			Horizon   string
			Schedules int
			Total     int64
			Peaks     []easyjob.ForecastSecond
			Minutes   []int
			Seconds   []easyjob.ForecastSecond
		}
		f.want(http.StatusOK, &fc, http.MethodGet, "/forecast?hours=2&top=3", "")
		// The echo node's own registered tasks may fire too: count ours by
		// their seconds (the storm's on the hour).
		if fc.Horizon != "2h0m0s" || len(fc.Minutes) != 120 || len(fc.Peaks) != 3 || fc.Seconds != nil {
			t.Fatalf("forecast: horizon %q, %d minutes, %d peaks, seconds %v: want 2h, 120, 3, none", fc.Horizon, len(fc.Minutes), len(fc.Peaks), fc.Seconds)
		}
		if p := fc.Peaks[0]; p.Fires < 4 || p.At.Minute() != 0 || p.At.Second() != 0 {
			t.Errorf("busiest second %+v: want the storm's, on the hour, 4 fires or more", p)
		}
		if fc.Schedules < 8 || fc.Total < 16 {
			t.Errorf("forecast of %d schedules, %d fires: want at least 8 and 16", fc.Schedules, fc.Total)
		}
		f.refused(http.StatusBadRequest, codeRequest, "hours", http.MethodGet, "/forecast?hours=0", "")
		f.refused(http.StatusBadRequest, codeRequest, "hours", http.MethodGet, "/forecast?hours=169", "")
	})
}

// TestAPIBackfillAndOverlap: a schedule's overlap policy and max fires
// read back; POST /backfill runs each fire of the range once (kind
// backfill, its nominal time) and answers them; a second backfill while
// one runs, a future range and a chain step's are refused.
func TestAPIBackfillAndOverlap(t *testing.T) {
	eachStore(t, func(t *testing.T, store repository.Store) {
		f := newAPIFixture(t, store, Options{})
		var created apiTaskOut
		f.want(http.StatusCreated, &created, http.MethodPost, "/tasks",
			`{"name": "b1", "handler": "echo", "cron": "*/2 * * * * *", "args": {"n": 1}, "overlap": "skip", "overlap_grace": "3s", "max_fires": 1000}`)
		if created.Overlap != "skip" || created.OverlapGrace != "3s" || created.MaxFires != 1000 {
			t.Errorf("created %+v; want overlap skip, grace 3s, max fires 1000", created)
		}
		f.refused(http.StatusBadRequest, codeInvalidOption, "unknown overlap policy", http.MethodPost, "/tasks",
			`{"name": "b2", "handler": "echo", "cron": "* * * * * *", "args": {"n": 1}, "overlap": "sometimes"}`)

		now := time.Now().UTC()
		var reply backfillReply
		body := fmt.Sprintf(`{"from": %q, "to": %q}`, now.Add(-9*time.Second).Format(time.RFC3339Nano), now.Add(-time.Second).Format(time.RFC3339Nano))
		f.want(http.StatusAccepted, &reply, http.MethodPost, "/tasks/b1/backfill", body)
		if reply.Task != "b1" || len(reply.Fires) < 3 || len(reply.Fires) > 5 {
			t.Fatalf("backfill answered %+v; want the 4 even seconds of the range", reply)
		}
		f.refused(http.StatusBadRequest, codeInvalidBackfill, "in the future", http.MethodPost, "/tasks/b1/backfill",
			fmt.Sprintf(`{"from": %q, "to": %q}`, now.Add(time.Hour).Format(time.RFC3339), now.Add(2*time.Hour).Format(time.RFC3339)))
		f.refused(http.StatusBadRequest, codeRequest, "from is required", http.MethodPost, "/tasks/b1/backfill", `{}`)
		var runs struct {
			Runs []easyjob.ExecutionInfo
		}
		waitUntil(t, "the backfill runs", func() bool {
			f.want(http.StatusOK, &runs, http.MethodGet, "/tasks/b1/history?limit=200", "")
			n := 0
			for _, r := range runs.Runs {
				if r.Kind == easyjob.RunBackfill {
					n++
				}
			}
			return n == len(reply.Fires)
		})
	})
}
