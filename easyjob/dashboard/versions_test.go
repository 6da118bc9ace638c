package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/easyjob-go/easyjob/easyjob"
)

// TestTaskPageVersions: a schedule's page lists its versions, newest
// first, with who changed them; a task registered in code shows the
// section once rescheduled, escaped; one never edited has none.
func TestTaskPageVersions(t *testing.T) {
	f := newFixture(t, Options{})
	alice := easyjob.WithActor(f.ctx, easyjob.Actor{Name: "alice", Via: "cli", From: "laptop"})
	if _, err := f.client.Create(alice, easyjob.Schedule{Name: "s", Handler: "mailer", Cron: "0 6 * * *",
		Args: map[string]any{"to": "ops"}}, easyjob.AllowUnknownHandler()); err != nil {
		t.Fatal(err)
	}
	bob := easyjob.WithActor(f.ctx, easyjob.Actor{Name: "bob", Via: "dashboard"})
	if _, err := f.client.Update(bob, easyjob.Schedule{Name: "s", Handler: "mailer", Cron: "0 7 * * *",
		Args: map[string]any{"to": "dev"}, Options: []easyjob.Option{easyjob.TZ("Europe/Paris")}}, easyjob.AllowUnknownHandler()); err != nil {
		t.Fatal(err)
	}
	f.dash.clearCache()

	code, body := f.get("/task?name=s")
	if code != http.StatusOK {
		t.Fatalf("task page: %d", code)
	}
	for _, want := range []string{`id="versions"`, `data-revision="2"`, `data-revision="1"`, ">bob<", "via dashboard",
		">alice<", "from laptop", "<code>0 7 * * *</code>", "(zone Europe/Paris)", `{&#34;to&#34;:&#34;ops&#34;}`} {
		if !strings.Contains(body, want) {
			t.Errorf("schedule page: no %q in the versions:\n%s", want, section(body, `id="versions"`))
		}
	}
	if strings.Index(body, `data-revision="2"`) > strings.Index(body, `data-revision="1"`) {
		t.Error("versions not newest first")
	}

	if _, body := f.get("/task?name=report"); strings.Contains(body, `id="versions"`) {
		t.Error("a task never edited has a versions section")
	}
	if _, err := f.client.Reschedule(f.ctx, xssName, "0 0 * * * *"); err != nil {
		t.Fatal(err)
	}
	f.dash.clearCache()
	_, body = f.get("/task?name=" + url.QueryEscape(xssName))
	if !strings.Contains(body, `id="versions"`) || !strings.Contains(body, `data-revision="2"`) || !strings.Contains(body, "<code>0 0 * * * *</code>") {
		t.Errorf("a rescheduled registered task: no version 2 in:\n%s", section(body, `id="versions"`))
	}
	if strings.Contains(body, `<script>alert`) {
		t.Error("the task page has the name unescaped")
	}
}

// section is body from the first mark on, for a readable failure.
func section(body, mark string) string {
	if i := strings.Index(body, mark); i >= 0 {
		body = body[i:]
	}
	if len(body) > 3000 {
		body = body[:3000]
	}
	return body
}

// TestAPIVersions: GET /tasks/{name}/versions lists the versions, newest
// first; an unknown name is 404; a task without versions an empty list.
func TestAPIVersions(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := easyjob.WithActor(f.ctx, easyjob.Actor{Name: "ada", Via: "api"})
	if _, err := f.client.Create(ctx, easyjob.Schedule{Name: "s", Handler: "mailer", Cron: "0 6 * * *"}, easyjob.AllowUnknownHandler()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Reschedule(ctx, "s", "0 9 * * *"); err != nil {
		t.Fatal(err)
	}
	code, body := f.get("/api/v1/tasks/s/versions")
	var got struct {
		Versions []easyjob.Version `json:"versions"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || code != http.StatusOK {
		t.Fatalf("GET versions: %d %v:\n%s", code, err, body)
	}
	if vs := got.Versions; len(vs) != 2 || vs[0].Revision != 2 || vs[0].Cron != "0 9 * * *" || vs[1].Revision != 1 ||
		vs[1].ChangedBy.Name != "ada" || vs[1].ChangedAt.IsZero() {
		t.Errorf("versions = %+v", vs)
	}
	if code, body := f.get("/api/v1/tasks/report/versions"); code != http.StatusOK || !strings.Contains(body, `"versions":[]`) {
		t.Errorf("versions of a task never edited: %d %s", code, body)
	}
	if code, body := f.get("/api/v1/tasks/ghost/versions"); code != http.StatusNotFound || !strings.Contains(body, "ghost") {
		t.Errorf("versions of an unknown task: %d %s", code, body)
	}
}
