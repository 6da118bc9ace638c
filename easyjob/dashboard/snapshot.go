package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/easyjob-go/easyjob/easyjob"
)

// snapshot is the overview read (nodes, task totals, failures) with the
// local time it was read at: every page shows it in its header, and tells
// the store's time from it without a query of its own.
type snapshot struct {
	Overview
	readAt time.Time
}

// now is the store's clock now, as far as the snapshot tells.
func (s snapshot) now() time.Time { return s.Now.Add(time.Since(s.readAt)) }

// nodeName names node id for display: its name, or "node N" for a row
// that is gone.
func (s snapshot) nodeName(id int64) string {
	for _, n := range s.Nodes {
		if n.ID == id {
			return n.Name
		}
	}
	return "node " + strconv.FormatInt(id, 10)
}

// snapshot reads the overview, once per refresh interval for everyone.
func (h *site) snapshot(ctx context.Context) (snapshot, error) {
	return cached(ctx, h.cache, "overview", func(ctx context.Context) (snapshot, error) {
		o, err := readOverview(ctx, h.client)
		return snapshot{Overview: o, readAt: time.Now()}, err
	})
}

// recentRuns reads the fires of the last window, newest first, once per
// refresh interval for everyone.
func (h *site) recentRuns(ctx context.Context, s snapshot, window time.Duration) ([]easyjob.ExecutionInfo, error) {
	return cached(ctx, h.cache, "recent?"+window.String(), func(ctx context.Context) ([]easyjob.ExecutionInfo, error) {
		return readRecentRuns(ctx, h.client, s.Now.Add(-window), h.opts.MaxRuns)
	})
}

// windowChoices are the spans the timeline offers besides Options.Window.
var windowChoices = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour}

// windowChoice is one span of the timeline's selector.
type windowChoice struct {
	Key string // the query value: "1m", "1h", ...
	On  bool
}

// timelineWindow reads ?window= (one of windowChoices or Options.Window),
// and lists the choices.
func (h *site) timelineWindow(r *http.Request) (time.Duration, []windowChoice) {
	w := h.opts.Window
	if d, err := time.ParseDuration(r.URL.Query().Get("window")); err == nil && slices.Contains(windowChoices, d) {
		w = d
	}
	var out []windowChoice
	seen := false
	for _, c := range windowChoices {
		seen = seen || c == h.opts.Window
		out = append(out, windowChoice{Key: shortDur(c), On: c == w})
	}
	if !seen {
		out = append(out, windowChoice{Key: h.opts.Window.String(), On: h.opts.Window == w})
	}
	return w, out
}

// unavailable answers a page whose reads failed. The error itself goes to
// the log: a driver's error names the user, database and host, which a
// page must not show.
func (h *site) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	h.opts.Logger.Error("easyjob dashboard: read failed", "path", r.URL.Path, "err", err)
	h.fail(w, r, http.StatusServiceUnavailable, "Cannot read the schedule: "+failureKind(err)+". The service's log has the details.")
}

// failureKind names the kind of a failed read without its details.
func failureKind(err error) string {
	var conn *pgconn.ConnectError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "the database did not answer in time"
	case errors.As(err, &conn):
		return "cannot connect to the database"
	default:
		return "the database returned an error"
	}
}

// notFound answers a request about a task the group does not have.
func (h *site) notFound(w http.ResponseWriter, r *http.Request, name string) {
	h.fail(w, r, http.StatusNotFound, fmt.Sprintf("There is no task named %q in group %q.", name, h.client.Group()))
}

// readFailed answers a request whose read of task name failed with err
// (not nil): 404 for an unknown task, else 503.
func (h *site) readFailed(w http.ResponseWriter, r *http.Request, name string, err error) {
	if errors.Is(err, easyjob.ErrTaskNotFound) {
		h.notFound(w, r, name)
		return
	}
	h.unavailable(w, r, err)
}

// nodeCounts counts nodes by state.
type nodeCounts struct{ Live, Leaving, Suspect, Dead int }

func countNodes(ns []easyjob.NodeInfo) nodeCounts {
	var c nodeCounts
	for _, n := range ns {
		switch nodeState(n) {
		case "live":
			c.Live++
		case "leaving":
			c.Leaving++
		case "dead":
			c.Dead++
		default:
			c.Suspect++
		}
	}
	return c
}

// nodeState is live, leaving, dead or suspect (neither live nor dead yet).
func nodeState(n easyjob.NodeInfo) string {
	switch {
	case n.Live:
		return "live"
	case n.Dead:
		return "dead"
	case n.Leaving:
		return "leaving"
	}
	return "suspect"
}
