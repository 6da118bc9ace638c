package dashboard

import (
	"net/http"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// failureOrder is the order failures are listed in.
var failureOrder = repository.FailureStatuses

// overviewData is the overview page: nodes by state, tasks by state,
// fire rate and lag, failures of the last hour, fires per second by node,
// the timeline.
type overviewData struct {
	recentView
	Fires    chart
	Nodes    nodeCounts
	Stats    fireStats
	Failures []statusCount
}

type statusCount struct {
	Status string
	Count  int
}

func (h *site) overview(w http.ResponseWriter, r *http.Request) {
	v, ok := h.readRecent(w, r)
	if !ok {
		return
	}
	d := overviewData{
		recentView: v, Nodes: countNodes(v.Snap.Nodes), Stats: computeStats(v.Runs, v.Now, v.Truncated),
		Failures: failureList(v.Snap.Fails), Fires: firesChart(v.Timeline, v.Runs),
	}
	h.render(w, r, http.StatusOK, "overview", page{Title: "Overview", Now: v.Now, Data: d})
}

// recentView is what the overview and the nodes page share: the snapshot,
// the runs of the window the request chose, their timeline.
type recentView struct {
	Snap      snapshot
	Now       time.Time
	Runs      []easyjob.ExecutionInfo // newest first
	Truncated bool                    // the read hit Options.MaxRuns
	Window    time.Duration
	Windows   []windowChoice
	Timeline  timeline
}

// readRecent reads the snapshot and the runs of the request's window,
// answering the request itself when it cannot.
func (h *site) readRecent(w http.ResponseWriter, r *http.Request) (recentView, bool) {
	var v recentView
	v.Window, v.Windows = h.timelineWindow(r)
	s, err := h.snapshot(r.Context())
	if err != nil {
		h.unavailable(w, r, err)
		return v, false
	}
	runs, err := h.recentRuns(r.Context(), s, v.Window)
	if err != nil {
		h.unavailable(w, r, err)
		return v, false
	}
	v.Snap, v.Now, v.Runs, v.Truncated = s, s.now(), runs, len(runs) >= h.opts.MaxRuns
	v.Timeline = buildTimeline(s.Nodes, runs, v.Now, v.Window, v.Truncated)
	return v, true
}

// failureList orders the failure counts as FailureStatuses does.
func failureList(f FailureCount) []statusCount {
	var out []statusCount
	for _, st := range failureOrder {
		if n := f[st]; n > 0 {
			out = append(out, statusCount{string(st), n})
		}
	}
	for st, n := range f { // a status this build does not list
		if !slices.Contains(failureOrder, st) {
			out = append(out, statusCount{string(st), n})
		}
	}
	return out
}
