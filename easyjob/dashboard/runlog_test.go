package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// TestRunLog: a run's log is served by the API (a given run, or the
// newest with id 0) and shown on the run page, which the task page's run
// ids link to; a bad id is refused, an unknown run is not found.
func TestRunLog(t *testing.T) {
	eachStore(t, func(t *testing.T, store repository.Store) {
		f := newAPIFixture(t, store, Options{})
		ctx := context.Background()
		if _, err := f.client.Create(ctx, easyjob.Schedule{Name: "logger", Handler: "echo", Cron: "0 0 0 1 1 *", Args: json.RawMessage(`{"n": 41}`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.client.Trigger(ctx, "logger", easyjob.WithArgs(json.RawMessage(`{"n": 42}`))); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the triggered run", func() bool { return f.node.saw(42) })
		var l easyjob.RunLog
		waitUntil(t, "the run recorded", func() bool {
			code, _, body := f.call(http.MethodGet, "/tasks/logger/runs/0/log", "")
			return code == http.StatusOK && json.Unmarshal([]byte(body), &l) == nil && l.Run.FinishedAt.After(l.Run.StartedAt.Add(-1))
		})
		if !strings.Contains(l.Log, "level=INFO msg=echo n=42") || l.Run.Kind != easyjob.RunManual {
			t.Fatalf("the run's log = %+v", l)
		}
		var again easyjob.RunLog
		f.want(http.StatusOK, &again, http.MethodGet, fmt.Sprintf("/tasks/logger/runs/%d/log", l.Run.ID), "")
		if again.Log != l.Log || again.Run.ID != l.Run.ID {
			t.Errorf("run %d by id = %+v", l.Run.ID, again)
		}
		f.refused(http.StatusBadRequest, codeRequest, "id", http.MethodGet, "/tasks/logger/runs/x/log", "")
		f.refused(http.StatusNotFound, codeNotFound, "run not found", http.MethodGet, fmt.Sprintf("/tasks/logger/runs/%d/log", l.Run.ID+1000), "")
		f.refused(http.StatusNotFound, codeNotFound, "task not found", http.MethodGet, "/tasks/nope/runs/0/log", "")

		site := httptest.NewServer(New(f.client, Options{}))
		defer site.Close()
		get := func(path string) (int, string) {
			t.Helper()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, site.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, html.UnescapeString(string(b))
		}
		if code, body := get("/task?name=logger"); code != http.StatusOK || !strings.Contains(body, fmt.Sprintf(`/run?name=logger&id=%d"`, l.Run.ID)) {
			t.Errorf("the task page does not link run %d: %d", l.Run.ID, code)
		}
		code, body := get(fmt.Sprintf("/run?name=logger&id=%d", l.Run.ID))
		if code != http.StatusOK || !strings.Contains(body, `id="run-log"`) || !strings.Contains(body, "msg=echo n=42") ||
			!strings.Contains(body, fmt.Sprintf("easyjob logs logger %d", l.Run.ID)) {
			t.Errorf("the run page: %d:\n%s", code, body)
		}
		if code, _ := get(fmt.Sprintf("/run?name=logger&id=%d", l.Run.ID+1000)); code != http.StatusNotFound {
			t.Errorf("the page of an unknown run: %d", code)
		}
	})
}
