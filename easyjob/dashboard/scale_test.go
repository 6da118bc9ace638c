package dashboard

import (
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestScale times every page of a group of 10,000 tasks with 1,000,000
// history rows (half of them on one task), uncached. It takes about a
// minute, mostly to insert the rows, so it runs only with
// EASYJOB_DASHBOARD_SCALE=1:
//
//	EASYJOB_DASHBOARD_SCALE=1 go test -run TestScale -v ./easyjob/dashboard
func TestScale(t *testing.T) {
	if os.Getenv("EASYJOB_DASHBOARD_SCALE") != "1" {
		t.Skip("set EASYJOB_DASHBOARD_SCALE=1 to time the pages at 10,000 tasks and 1,000,000 runs")
	}
	dsn := pgtest.NewDatabase(t)
	store := pgtest.OpenStore(t, dsn)
	ctx := t.Context()
	start := time.Now()
	for _, q := range scaleSQL {
		if _, err := store.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Logf("inserted 10,000 tasks and 1,000,000 runs in %v", time.Since(start).Round(time.Millisecond))

	client, err := easyjob.NewClient(ctx, easyjob.Config{Store: store, Group: "scale", SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var deep string
	if err := store.DB().QueryRowContext(ctx, `SELECT (min(id) + 100)::text FROM easyjob_executions`).Scan(&deep); err != nil {
		t.Fatal(err)
	}
	h := New(client, Options{Refresh: time.Nanosecond}) // nothing cached
	pages := []string{
		"/", "/?window=1h", "/nodes",
		"/tasks", "/tasks?after=task-05000", "/tasks?before=%F4%8F%BF%BF", "/tasks?q=task-0999", "/tasks?show=stale",
		"/tasks?show=failing&after=task-00100", "/tasks?show=paused",
		"/task?name=task-00001", "/task?name=task-00001&status=failed", "/task?name=task-00001&status=abandoned",
		"/task?name=task-00001&since=1h", "/task?name=task-00001&status=failed&since=15m", "/task?name=task-00001&before=" + deep,
		"/task?name=task-05000", "/reschedule?name=task-00001&cron=*/7+*+*+*+*+*",
	}
	var slowest time.Duration
	var slowPage string
	for _, p := range pages {
		var took []time.Duration
		for range 3 {
			t0 := time.Now()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, p, nil))
			took = append(took, time.Since(t0))
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", p, rec.Code, rec.Body.String())
			}
			if strings.Contains(p, "status=failed") && !strings.Contains(rec.Body.String(), `data-status="failed"`) {
				t.Errorf("GET %s: no failed run shown", p)
			}
		}
		slices.Sort(took)
		t.Logf("%-60s median %8v  max %8v", p, took[1].Round(100*time.Microsecond), took[2].Round(100*time.Microsecond))
		if took[1] > slowest {
			slowest, slowPage = took[1], p
		}
	}
	t.Logf("slowest page: %s, median %v", slowPage, slowest.Round(100*time.Microsecond))
	if slowest > 2*time.Second {
		t.Errorf("slowest page %s takes %v, want under 2s", slowPage, slowest)
	}
}

// scaleSQL fills group "scale": 10,000 tasks (1 in 10 paused, 1 in 7
// claimed by a node, 1 in 13 failing, the last 1,000 registered by no
// node), three live nodes, and 1,000,000 runs 10 ms apart up to now, ids
// in time order (1 in 1,000 failed, 1 in 5,000 abandoned), half of them
// of task-00001.
var scaleSQL = []string{
	`INSERT INTO easyjob_task_sets (id, names)
	 SELECT 'scale-set', array_agg('task-' || lpad(i::text, 5, '0')) FROM generate_series(1, 9000) i`,
	`INSERT INTO easyjob_nodes (group_name, name, heartbeat_at, task_set)
	 SELECT 'scale', 'node-' || i, now() + interval '1 hour', 'scale-set' FROM generate_series(1, 3) i`,
	`INSERT INTO easyjob_tasks (group_name, name, cron, status, paused, node_id, next_start_time, last_status, last_error, last_finished_at)
	 SELECT 'scale', 'task-' || lpad(i::text, 5, '0'), '*/' || (1 + i % 59) || ' * * * * *',
	   CASE WHEN i % 10 = 0 THEN 'paused' WHEN i % 7 = 0 THEN 'doing' ELSE 'pending' END,
	   i % 10 = 0,
	   CASE WHEN i % 7 = 0 AND i % 10 <> 0 THEN (SELECT min(id) FROM easyjob_nodes WHERE group_name = 'scale') + i % 3 END,
	   now() + (i % 600) * interval '1 second',
	   CASE WHEN i % 13 = 0 THEN 'failed' ELSE 'succeeded' END,
	   CASE WHEN i % 13 = 0 THEN 'boom ' || i ELSE '' END,
	   now() - (i % 60) * interval '1 second'
	 FROM generate_series(1, 10000) i`,
	`INSERT INTO easyjob_executions (task_id, node_id, scheduled_at, started_at, finished_at, status, error, attempt)
	 SELECT CASE WHEN i % 2 = 0 THEN f.id ELSE f.id + (i / 2) % 10000 END,
	   f.node + i % 3,
	   now() - (1000001 - i) * interval '10 milliseconds',
	   now() - (1000001 - i) * interval '10 milliseconds' + interval '3 milliseconds',
	   now() - (1000001 - i) * interval '10 milliseconds' + interval '8 milliseconds',
	   CASE WHEN i % 5000 = 0 THEN 'abandoned' WHEN i % 1000 = 0 THEN 'failed' ELSE 'succeeded' END,
	   CASE WHEN i % 1000 = 0 THEN 'boom' ELSE '' END, 1
	 FROM generate_series(1, 1000000) i,
	   (SELECT min(t.id) AS id, (SELECT min(id) FROM easyjob_nodes WHERE group_name = 'scale') AS node
	    FROM easyjob_tasks t WHERE t.group_name = 'scale') f`,
	`ANALYZE easyjob_tasks`,
	`ANALYZE easyjob_executions`,
}
