package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// pageSize is the number of rows of a task list or history page.
const pageSize = 50

// taskFilters are the choices of the task list's filter bar.
var taskFilters = []string{"all", "pending", "running", "paused", "finished", "failing", "stale"}

// tasksData is the task list page.
type tasksData struct {
	Snap    snapshot
	Search  string
	Show    string
	Filters []string
	// After, Before: the page's cursor (see repository.TaskQuery).
	After, Before string
	// Total counts the matching tasks; Capped: at least that many.
	Total  int
	Capped bool
	// Prev, Next: the cursors of the pages around this one (before the
	// first row, after the last; "" for none).
	Prev, Next string
	Rows       []taskRow
	Query      string // the list's query (search, filter, cursor): its cache key
	// BackQuery is Query without the search term, for the actions' way
	// back to the list (which takes the term from the list's address):
	// a page shows the term once, in the search box.
	BackQuery string
}

// taskRow is one task as the list and the task page show it.
type taskRow struct {
	TaskView
	Words string
	// Next are the fires to come: the row's next fire, then the cron's.
	Next  []time.Time
	Owner string // the claimer's name while running
}

func (h *site) tasks(w http.ResponseWriter, r *http.Request) {
	s, err := h.snapshot(r.Context())
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	q := r.URL.Query()
	d := tasksData{Snap: s, Search: strings.TrimSpace(q.Get("q")), Show: q.Get("show"), Filters: taskFilters,
		After: q.Get("after"), Before: q.Get("before")}
	if f := q.Get("filter"); f != "" { // a filter chip: the list from its start
		d.Show, d.After, d.Before = f, "", ""
	}
	if d.Show = canonFilter(d.Show); !validFilter(d.Show) {
		d.Show = "all"
	}
	if d.After != "" {
		d.Before = ""
	}
	query := taskQuery(d.Search, d.Show)
	query.After, query.Before, query.Limit = d.After, d.Before, pageSize
	d.Query = listQuery(d.Search, d.Show, d.After, d.Before)
	d.BackQuery = listQuery("", d.Show, d.After, d.Before)
	p, err := cached(r.Context(), h.cache, "tasks?"+d.Query,
		func(ctx context.Context) (TaskPage, error) { return readTaskPage(ctx, h.client, query) })
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	d.Total, d.Capped = p.Total, p.Capped
	if d.Search == "" && d.Show == "all" { // the overview's count is exact at any size
		d.Total, d.Capped = s.Tasks.Total, false
	}
	d.Prev, d.Next = p.Prev, p.Next
	for _, t := range p.Tasks {
		d.Rows = append(d.Rows, newTaskRow(t, s, 2))
	}
	h.render(w, r, http.StatusOK, "tasks", page{Title: "Tasks", Now: s.now(), Data: d})
}

// canonFilter names a filter as the list does: doing, the store's word
// (older links, the API), is running.
func canonFilter(show string) string {
	if show == "doing" {
		return "running"
	}
	return show
}

func validFilter(show string) bool {
	for _, f := range taskFilters {
		if f == show {
			return true
		}
	}
	return false
}

// taskQuery is the client query of a list's filters.
func taskQuery(search, show string) repository.TaskQuery {
	q := repository.TaskQuery{Search: search}
	switch show {
	case "pending", "finished":
		q.Status = repository.TaskStatus(show)
	case "running":
		q.Status = repository.TaskDoing
	case "paused":
		q.Paused = true
	case "failing":
		q.Failing = true
	case "stale":
		q.Stale = true
	}
	return q
}

// listQuery encodes a list page's query string.
func listQuery(search, show, after, before string) string {
	v := url.Values{}
	if search != "" {
		v.Set("q", search)
	}
	if show != "" && show != "all" {
		v.Set("show", show)
	}
	if after != "" {
		v.Set("after", after)
	} else if before != "" {
		v.Set("before", before)
	}
	return v.Encode()
}

// newTaskRow adds to t what the pages show: its cron in words, up to
// extra fires after its next one, its owner's name.
func newTaskRow(t TaskView, s snapshot, extra int) taskRow {
	markWaiting(&t.TaskInfo, s.live)
	row := taskRow{TaskView: t, Words: describeCron(t.Cron, t.Timezone)}
	if t.NodeID != 0 {
		row.Owner = s.nodeName(t.NodeID)
	}
	if t.Status == repository.TaskFinished || t.Cron == "" {
		return row
	}
	row.Next = []time.Time{t.NextStartTime}
	// A spread task's fires are its cron's moved by its offset (a one-off
	// is not moved).
	var off time.Duration
	if !strings.HasPrefix(strings.TrimSpace(t.Cron), "@at ") {
		off = easyjob.SpreadOffset(t.Name, t.Options.Spread)
	}
	if more, err := easyjob.NextFires(t.Cron, t.Timezone, t.NextStartTime.Add(-off), extra); err == nil {
		for _, m := range more {
			row.Next = append(row.Next, m.Add(off))
		}
	}
	return row
}
