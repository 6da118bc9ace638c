package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/dashboard"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// A service mounts the dashboard of its group under a prefix of its own,
// behind its own authentication (here a header check standing in for it).
func Example() {
	ctx := context.Background()
	// In a service: easyjob.Config{DSN: os.Getenv("DATABASE_URL"), Group: "billing"}.
	client, err := easyjob.NewClient(ctx, easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	dash := dashboard.New(client, dashboard.Options{
		// Everyone who gets in may look; only operators may act.
		CanAct: func(r *http.Request) bool { return r.Header.Get("X-Role") == "operator" },
	})
	mux := http.NewServeMux()
	mux.Handle("/admin/jobs/", requireLogin(http.StripPrefix("/admin/jobs", dash)))

	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, path := range []string{"/admin/jobs/", "/admin/jobs/tasks", "/admin/jobs/nodes"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		req.Header.Set("X-User", "ada")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		res.Body.Close()
		fmt.Println(path, res.StatusCode)
	}
	// Output:
	// /admin/jobs/ 200
	// /admin/jobs/tasks 200
	// /admin/jobs/nodes 200
}

// requireLogin stands for the service's authentication middleware.
func requireLogin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.TrimSpace(r.Header.Get("X-User")) == "" {
			http.Error(w, "log in first", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// A service serves the JSON API alone (dashboard.New serves it under
// /api/v1/ next to the pages). Writes need Content-Type: application/json.
func ExampleNewAPI() {
	ctx := context.Background()
	client, err := easyjob.NewClient(ctx, easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	mux := http.NewServeMux()
	mux.Handle("/jobs/", http.StripPrefix("/jobs", dashboard.NewAPI(client, dashboard.Options{})))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	send := func(method, path, body string) {
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer res.Body.Close()
		var out struct{ Name, Code string }
		_ = json.NewDecoder(res.Body).Decode(&out)
		fmt.Println(method, path, res.StatusCode, out.Name+out.Code)
	}
	// No node registers "report" yet: refused, unless allow_unknown.
	send(http.MethodPost, "/jobs/api/v1/tasks", `{"name": "nightly", "handler": "report", "cron": "0 3 * * *"}`)
	send(http.MethodPost, "/jobs/api/v1/tasks", `{"name": "nightly", "handler": "report", "cron": "0 3 * * *", "args": {"day": "mon"}, "allow_unknown": true}`)
	send(http.MethodGet, "/jobs/api/v1/tasks/nightly", "")
	send(http.MethodGet, "/jobs/api/v1/tasks/nope", "")
	// Output:
	// POST /jobs/api/v1/tasks 409 unknown_handler
	// POST /jobs/api/v1/tasks 201 nightly
	// GET /jobs/api/v1/tasks/nightly 200 nightly
	// GET /jobs/api/v1/tasks/nope 404 not_found
}
