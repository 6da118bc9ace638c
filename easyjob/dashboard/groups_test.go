package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// addGroup puts tasks names in group of the fixture's store.
func (f *fixture) addGroup(group string, names ...string) {
	f.t.Helper()
	now, _ := f.store.Now(f.ctx)
	defs := make([]repository.TaskDef, len(names))
	for i, n := range names {
		defs[i] = repository.TaskDef{Name: n, Cron: "0 0 * * * *", NextStartTime: now.Add(time.Hour)}
	}
	if _, err := f.store.UpsertTasks(f.ctx, group, defs); err != nil {
		f.t.Fatal(err)
	}
}

// TestGroupsAllGroups serves every group of the store: /groups lists
// them with their counts, /g/{group}/ serves each group's pages and API,
// the switcher links them, and the existing URLs stay the client's group.
func TestGroupsAllGroups(t *testing.T) {
	f := newFixture(t, Options{AllGroups: true})
	f.addGroup("billing", "invoice", "dunning")
	f.addGroup("mail/out", "digest")
	if _, err := f.store.Pause(f.ctx, "billing", "dunning"); err != nil {
		t.Fatal(err)
	}
	f.dash.clearCache()

	code, body := f.get("/groups")
	if code != http.StatusOK {
		t.Fatalf("GET /groups: %d %s", code, body)
	}
	for _, want := range []string{`data-group="billing"`, `data-group="default"`, `data-group="mail/out"`,
		`href="/ops/g/billing/"`, `href="/ops/g/mail%2Fout/"`, `id="group-switch"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/groups lacks %s", want)
		}
	}

	code, body = f.get("/g/billing/tasks")
	if code != http.StatusOK || !strings.Contains(body, "invoice") || strings.Contains(body, "orphan") {
		t.Fatalf("GET /g/billing/tasks: %d, want billing's tasks only:\n%s", code, body)
	}
	for _, want := range []string{`href="/ops/g/billing/nodes"`, `href="/ops/g/default/tasks"`, `href="/ops/g/mail%2Fout/tasks"`,
		`href="/ops/groups"`, `href="/ops/g/billing/audit"`} {
		if !strings.Contains(body, want) {
			t.Errorf("billing's task list lacks the link %s", want)
		}
	}
	if code, body = f.get("/g/mail%2Fout/"); code != http.StatusOK || !strings.Contains(body, "<b>mail/out</b>") {
		t.Errorf("GET /g/mail%%2Fout/: %d, want the overview of mail/out", code)
	}
	if code, body = f.get("/tasks"); code != http.StatusOK || !strings.Contains(body, "orphan") || strings.Contains(body, "invoice") {
		t.Errorf("GET /tasks: %d, want the client's group as before", code)
	}
	if code, _ = f.get("/g/nosuch/tasks"); code != http.StatusNotFound {
		t.Errorf("GET /g/nosuch/tasks: %d, want 404", code)
	}
	if code, _ = f.get("/g/billing"); code != http.StatusMovedPermanently {
		t.Errorf("GET /g/billing: %d, want a redirect to /g/billing/", code)
	}

	// The JSON API: the groups, and one group's tasks.
	code, body = f.get("/api/v1/groups")
	var v struct {
		Home   string         `json:"default_group"`
		Groups []GroupSummary `json:"groups"`
	}
	if err := json.Unmarshal([]byte(body), &v); code != http.StatusOK || err != nil {
		t.Fatalf("GET /api/v1/groups: %d %v %s", code, err, body)
	}
	byName := map[string]GroupSummary{}
	for _, g := range v.Groups {
		byName[g.Group] = g
	}
	if b := byName["billing"]; v.Home != "default" || len(v.Groups) != 3 || b.Tasks != 2 || b.Paused != 1 {
		t.Errorf("groups = %+v, want 3 with billing's 2 tasks, 1 paused", v)
	}
	if d := byName["default"]; d.Tasks != 4 || d.Live != 1 || d.Fires != 2 || d.Failures != 1 || d.LastFailure.IsZero() {
		t.Errorf("default = %+v, want 4 tasks, 1 live node, 2 fires, 1 failure", d)
	}
	code, body = f.get("/g/billing/api/v1/tasks")
	if code != http.StatusOK || !strings.Contains(body, `"invoice"`) || strings.Contains(body, `"orphan"`) {
		t.Errorf("GET /g/billing/api/v1/tasks: %d %s", code, body)
	}
	if code, body = f.get("/g/nosuch/api/v1/tasks"); code != http.StatusNotFound || !strings.Contains(body, `"not_found"`) {
		t.Errorf("GET /g/nosuch/api/v1/tasks: %d %s, want a JSON 404", code, body)
	}
}

// TestGroupsCanActSeesTheGroup: an action on a group's page reaches
// CanAct with that group, acts on that group, and is audited there.
func TestGroupsCanActSeesTheGroup(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	f := newFixture(t, Options{Groups: []string{"billing", "mail"}, CanAct: func(r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, RequestGroup(r))
		return RequestGroup(r) != "mail"
	}})
	f.addGroup("billing", "invoice")
	f.addGroup("mail", "digest")
	f.addGroup("hidden", "secret")

	if code, _ := f.get("/g/hidden/"); code != http.StatusNotFound {
		t.Errorf("GET /g/hidden/: %d, want 404 (not in Options.Groups)", code)
	}
	code, body := f.get("/g/billing/task?name=invoice")
	if code != http.StatusOK || !strings.Contains(body, `value="pause"`) {
		t.Fatalf("billing's task page: %d, want the pause button", code)
	}
	if _, body = f.get("/g/mail/task?name=digest"); strings.Contains(body, `value="pause"`) {
		t.Error("mail's task page shows actions CanAct refuses")
	}
	u, _ := url.Parse(f.srv.URL + "/ops/g/billing/")
	var tok string
	for _, c := range f.http.Jar.Cookies(u) {
		if c.Name == csrfCookie {
			tok = c.Value
		}
	}
	req, _ := http.NewRequestWithContext(f.ctx, http.MethodPost, f.srv.URL+"/ops/g/billing/action",
		strings.NewReader(url.Values{"op": {"pause"}, "name": {"invoice"}, csrfField: {tok}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("alice", "x")
	if code, body = f.do(req); code != http.StatusSeeOther {
		t.Fatalf("pause on billing: %d %s", code, body)
	}
	if bt, err := f.client.WithGroup("billing").Task(f.ctx, "invoice"); err != nil || !bt.Paused {
		t.Errorf("billing's invoice after pause: %+v %v", bt, err)
	}
	if ft := f.task("report"); ft.Paused {
		t.Error("the client's group was paused")
	}
	es, err := f.client.WithGroup("billing").Audit(f.ctx, repository.AuditFilter{})
	if err != nil || len(es) != 1 || es[0].Name != "alice" || es[0].Action != "pause" || es[0].Task != "invoice" {
		t.Errorf("billing's audit log = %+v %v, want alice's pause of invoice", es, err)
	}
	if code, body = f.get("/g/billing/audit"); code != http.StatusOK || !strings.Contains(body, "alice") {
		t.Errorf("billing's audit page: %d, want alice's entry", code)
	}

	// The API refuses mail's writes, by CanAct's word on the group.
	req, _ = http.NewRequestWithContext(f.ctx, http.MethodPost, f.srv.URL+"/ops/g/mail/api/v1/tasks/digest/pause", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	if code, _ = f.do(req); code != http.StatusForbidden {
		t.Errorf("API pause on mail: %d, want 403", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(asked, "billing") || !slices.Contains(asked, "mail") || slices.Contains(asked, "") {
		t.Errorf("CanAct saw the groups %q, want billing and mail, never none", asked)
	}
}

// TestGroupsOneGroup: without Groups or AllGroups, the handler serves its
// client's group only, with no switcher.
func TestGroupsOneGroup(t *testing.T) {
	f := newFixture(t, Options{})
	f.addGroup("billing", "invoice")
	if code, body := f.get("/"); code != http.StatusOK || strings.Contains(body, "group-switch") {
		t.Errorf("GET /: %d, want no switcher", code)
	}
	if code, _ := f.get("/g/billing/"); code != http.StatusNotFound {
		t.Errorf("GET /g/billing/: %d, want 404", code)
	}
	if code, body := f.get("/g/default/tasks"); code != http.StatusOK || !strings.Contains(body, "orphan") {
		t.Errorf("GET /g/default/tasks: %d, want the client's group", code)
	}
	if code, body := f.get("/api/v1/groups"); code != http.StatusOK || !strings.Contains(body, `"group":"default"`) || strings.Contains(body, "billing") {
		t.Errorf("GET /api/v1/groups: %d %s, want the client's group only", code, body)
	}
}
