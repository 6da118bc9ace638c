package harness

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/dashboard"
	"github.com/easyjob-go/easyjob/repository"
)

// listReps is how many times measureLists reads each list; the reported
// figure is the median (P50).
const listReps = 5

// listPageSize is the rows of a page of the dashboard's task list
// (easyjob/dashboard's pageSize).
const listPageSize = 50

// listLatency is how long the operator's views of the task list take with
// the trial's schedules stored, read after the trial (the nodes stopped):
// the dashboard's page query (repository TaskPage, 50 rows by name from a
// cursor, and the count capped at repository.TaskCountLimit) for the
// first and the last page, the overview's TaskCounts that every dashboard
// page reads too, the whole dashboard page (GET /tasks, a fresh handler
// each time so that its cache never answers: overview, page query and
// rendering), and Client.ListTasks of 1000 rows, the CLI's status and
// tasks by default.
type listLatency struct {
	Reps            int     `json:"reps"`
	Total           int     `json:"total"` // tasks the list counts
	Capped          bool    `json:"total_capped"`
	FirstPage       latency `json:"task_page_first"`
	DeepPage        latency `json:"task_page_deep"`
	TaskCounts      latency `json:"task_counts"`
	DashboardFirst  latency `json:"dashboard_tasks_first"`
	DashboardDeep   latency `json:"dashboard_tasks_deep"`
	ClientTasks     latency `json:"client_list_tasks"`
	ClientTasksRows int     `json:"client_list_tasks_rows"`
	Err             string  `json:"error,omitempty"`
}

// measureLists reads each list listReps times on dsn's group. A read that
// fails ends the measurement; Err says why.
func measureLists(ctx context.Context, dsn, group string) listLatency {
	l := listLatency{Reps: listReps}
	c, err := easyjob.NewClient(ctx, easyjob.Config{DSN: dsn, SkipMigrate: true, Group: group})
	if err != nil {
		l.Err = err.Error()
		return l
	}
	defer c.Close()
	// last is a cursor after every name: Before it is the last page.
	last := string(utf8.MaxRune)
	page := func(before string) func() error {
		return func() error {
			p, err := c.Control().TaskPage(ctx, group, repository.TaskQuery{LiveWithin: c.LiveAfter(), Before: before, Limit: listPageSize})
			l.Total, l.Capped = p.Total, p.TotalCapped
			return err
		}
	}
	web := func(query string) func() error {
		return func() error {
			h := dashboard.New(c, dashboard.Options{ReadOnly: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/tasks?"+query, nil))
			if rec.Code != http.StatusOK {
				return fmt.Errorf("dashboard GET /tasks?%s: status %d", query, rec.Code)
			}
			return nil
		}
	}
	if err := l.time("task page 1", &l.FirstPage, page("")); err != nil {
		return l
	}
	steps := []struct {
		what string
		into *latency
		read func() error
	}{
		{"last task page", &l.DeepPage, page(last)},
		{"task counts", &l.TaskCounts, func() error {
			_, err := c.Control().TaskCounts(ctx, group, c.LiveAfter())
			return err
		}},
		{"dashboard tasks page 1", &l.DashboardFirst, web("")},
		{"dashboard last tasks page", &l.DashboardDeep, web(url.Values{"before": {last}}.Encode())},
		{"client list tasks", &l.ClientTasks, func() error {
			ts, err := c.ListTasks(ctx, easyjob.TaskQuery{Limit: 1000})
			l.ClientTasksRows = len(ts.Tasks)
			return err
		}},
	}
	for _, s := range steps {
		if err := l.time(s.what, s.into, s.read); err != nil {
			return l
		}
	}
	return l
}

// time runs read listReps times into *into; a failure is recorded in
// l.Err (naming what) and returned.
func (l *listLatency) time(what string, into *latency, read func() error) error {
	ds := make([]time.Duration, 0, listReps)
	for range listReps {
		start := time.Now()
		if err := read(); err != nil {
			l.Err = fmt.Sprintf("%s: %v", what, err)
			return err
		}
		ds = append(ds, time.Since(start))
	}
	*into = summarize(ds)
	return nil
}
