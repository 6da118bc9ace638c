package dashboard

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// errDriver is a driver error as pgx writes it: it names the user, the
// database and the host.
var errDriver = errors.New("failed to connect to `user=alice database=secretdb`: db.internal.example:5432 (10.0.0.7): dial error: connection refused")

// downStore answers every read of the dashboard with errDriver.
type downStore struct{ *memory.Store }

func (downStore) Now(context.Context) (time.Time, error) { return time.Time{}, errDriver }
func (downStore) TaskCounts(context.Context, string, time.Duration) ([]repository.TaskCount, error) {
	return nil, errDriver
}
func (downStore) Nodes(context.Context, string) ([]repository.Node, error) { return nil, errDriver }
func (downStore) TaskPage(context.Context, string, repository.TaskQuery) (repository.TaskPage, error) {
	return repository.TaskPage{}, errDriver
}

// TestUnavailableHidesDriverDetails: a page whose reads fail says what
// kind of failure it was and sends the error itself to the log; no user,
// database or host reaches the page (issue 30, item 12).
func TestUnavailableHidesDriverDetails(t *testing.T) {
	client, err := easyjob.NewClient(t.Context(), easyjob.Config{Store: downStore{memory.New()}})
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	h := New(client, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	for _, path := range []string{"/", "/tasks", "/nodes", "/audit"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil))
		body := rec.Body.String()
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(body, "the database returned an error") {
			t.Errorf("GET %s: %d, want 503 saying the kind of failure; body:\n%s", path, rec.Code, body)
		}
		for _, secret := range []string{"alice", "secretdb", "db.internal", "10.0.0.7"} {
			if strings.Contains(body, secret) {
				t.Errorf("GET %s shows %q:\n%s", path, secret, body)
			}
		}
	}
	if !strings.Contains(logged.String(), "secretdb") {
		t.Errorf("the log did not get the error itself: %s", logged.String())
	}
}
