package dashboard

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/easyjob-go/easyjob/easyjob"
)

// runData is the run page: one run of a task and what its job logged.
type runData struct {
	Snap  snapshot
	Task  string
	Run   runRow
	Lines []string
	// Dag is the fire of the run's graph, nil when its task is in none.
	Dag *dagView
}

// run is the run page (GET /run?name=&id=): the run and its log, live
// while the job runs (the page's refresh reads the log again).
func (h *site) run(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("name")
	s, err := h.snapshot(r.Context())
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	id, err := strconv.ParseInt(q.Get("id"), 10, 64)
	if err != nil || id < 0 {
		h.notFound(w, r, name)
		return
	}
	l, err := h.client.RunLog(r.Context(), name, id)
	if err != nil {
		if errors.Is(err, easyjob.ErrRunNotFound) {
			h.notFound(w, r, name)
			return
		}
		h.readFailed(w, r, name, err)
		return
	}
	x := l.Run
	d := runData{Snap: s, Task: name, Run: runRow{ExecutionInfo: x, Node: s.nodeName(x.NodeID), Lag: max(x.StartedAt.Sub(x.ScheduledAt), 0)}}
	d.Dag = h.runDag(r.Context(), name, x, s)
	if l.Log != "" {
		d.Lines = strings.Split(strings.TrimSuffix(l.Log, "\n"), "\n")
	}
	title := name + " · run " + strconv.FormatInt(x.ID, 10)
	h.render(w, r, http.StatusOK, "run", page{Title: title, Now: s.now(), Data: d})
}

// runLog is GET /api/v1/tasks/{name}/runs/{id}/log: the run and its log
// (easyjob.RunLog); id 0 is the newest run.
func (a *API) runLog(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 0 {
		return apiErr(http.StatusBadRequest, codeRequest, "id: want a run's id (an integer from the task's history), or 0 for its newest run")
	}
	l, err := a.client.RunLog(r.Context(), r.PathValue("name"), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}
