package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// pageSize is the number of rows of a task list or history page.
const pageSize = 50

// taskFilters are the choices of the task list's filter bar.
var taskFilters = []string{"all", "pending", "doing", "paused", "finished", "failing", "stale"}

// tasksData is the task list page.
type tasksData struct {
	Snap    snapshot
	Search  string
	Show    string
	Filters []string
	Page    int // 1-based
	Pages   int
	Total   int
	Rows    []taskRow
	Query   string // the list's query (search, filter, page), for links back
}

// taskRow is one task as the list and the task page show it.
type taskRow struct {
	TaskView
	Words string
	// Next are the fires to come: the row's next fire, then the cron's.
	Next  []time.Time
	Owner string // the claimer's name while doing
}

func (h *Handler) tasks(w http.ResponseWriter, r *http.Request) {
	s, err := h.snapshot(r.Context())
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	q := r.URL.Query()
	d := tasksData{Snap: s, Search: strings.TrimSpace(q.Get("q")), Show: q.Get("show"), Filters: taskFilters, Page: 1}
	if !validFilter(d.Show) {
		d.Show = "all"
	}
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 1 {
		d.Page = n
	}
	query := taskQuery(d.Search, d.Show, d.Page)
	p, err := cached(r.Context(), h.cache, "tasks?"+listQuery(d.Search, d.Show, d.Page),
		func(ctx context.Context) (TaskPage, error) { return readTaskPage(ctx, h.client, query) })
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	d.Total, d.Pages = p.Total, max((p.Total+pageSize-1)/pageSize, 1)
	d.Query = listQuery(d.Search, d.Show, d.Page)
	for _, t := range p.Tasks {
		d.Rows = append(d.Rows, newTaskRow(t, s, 2))
	}
	h.render(w, r, http.StatusOK, "tasks", page{Title: "Tasks", Now: s.now(), Data: d})
}

func validFilter(show string) bool {
	for _, f := range taskFilters {
		if f == show {
			return true
		}
	}
	return false
}

// taskQuery is the client query of a list page.
func taskQuery(search, show string, page int) repository.TaskQuery {
	q := repository.TaskQuery{Search: search, Offset: (page - 1) * pageSize, Limit: pageSize}
	switch show {
	case "pending", "doing", "finished":
		q.Status = repository.TaskStatus(show)
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
func listQuery(search, show string, page int) string {
	v := url.Values{}
	if search != "" {
		v.Set("q", search)
	}
	if show != "" && show != "all" {
		v.Set("show", show)
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
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
	if more, err := easyjob.NextFires(t.Cron, t.Timezone, t.NextStartTime, extra); err == nil {
		row.Next = append(row.Next, more...)
	}
	return row
}
