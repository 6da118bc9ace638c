package harness

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

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
// the dashboard's page query (repository TaskPage, 50 rows by name, and
// the count of all) for the first and the last page, the overview's
// TaskCounts that every dashboard page reads too, the whole dashboard
// page (GET /tasks, a fresh handler each time so that its cache never
// answers: overview, page query and rendering), and Client.Tasks, which
// the CLI's status and tasks call.
type listLatency struct {
	Reps            int     `json:"reps"`
	Total           int     `json:"total"` // tasks the list counts
	DeepOffset      int     `json:"deep_page_offset"`
	FirstPage       latency `json:"task_page_first"`
	DeepPage        latency `json:"task_page_deep"`
	TaskCounts      latency `json:"task_counts"`
	DashboardFirst  latency `json:"dashboard_tasks_first"`
	DashboardDeep   latency `json:"dashboard_tasks_deep"`
	ClientTasks     latency `json:"client_tasks"`
	ClientTasksRows int     `json:"client_tasks_rows"`
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
	page := func(offset int) func() error {
		return func() error {
			p, err := c.Control().TaskPage(ctx, group, repository.TaskQuery{LiveWithin: c.LiveAfter(), Offset: offset, Limit: listPageSize})
			l.Total = p.Total
			return err
		}
	}
	web := func(pageNo int) func() error {
		return func() error {
			h := dashboard.New(c, dashboard.Options{ReadOnly: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/tasks?page="+strconv.Itoa(pageNo), nil))
			if rec.Code != http.StatusOK {
				return fmt.Errorf("dashboard GET /tasks?page=%d: status %d", pageNo, rec.Code)
			}
			return nil
		}
	}
	// The first page's read gives the total, and so the deep page.
	if err := l.time("task page 1", &l.FirstPage, page(0)); err != nil {
		return l
	}
	l.DeepOffset = max(l.Total-1, 0) / listPageSize * listPageSize
	steps := []struct {
		what string
		into *latency
		read func() error
	}{
		{"deep task page", &l.DeepPage, page(l.DeepOffset)},
		{"task counts", &l.TaskCounts, func() error {
			_, err := c.Control().TaskCounts(ctx, group, c.LiveAfter())
			return err
		}},
		{"dashboard tasks page 1", &l.DashboardFirst, web(1)},
		{"dashboard deep tasks page", &l.DashboardDeep, web(l.DeepOffset/listPageSize + 1)},
		{"client tasks", &l.ClientTasks, func() error {
			ts, err := c.Tasks(ctx)
			l.ClientTasksRows = len(ts)
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
