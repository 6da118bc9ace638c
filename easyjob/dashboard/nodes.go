package dashboard

import (
	"net/http"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// nodesData is the nodes page: every node row with its state and load,
// the last fire each ran in the window, and the timeline.
type nodesData struct {
	recentView
	Counts nodeCounts
	Rows   []nodeRow
}

type nodeRow struct {
	easyjob.NodeInfo
	State    string
	Fires    int       // root fires started in the timeline's window
	LastFire time.Time // the newest run it started in the window
	LastTask string
}

func (h *site) nodes(w http.ResponseWriter, r *http.Request) {
	v, ok := h.readRecent(w, r)
	if !ok {
		return
	}
	d := nodesData{recentView: v, Counts: countNodes(v.Snap.Nodes)}
	for _, n := range v.Snap.Nodes {
		row := nodeRow{NodeInfo: n, State: nodeState(n)}
		for _, x := range v.Runs { // newest first
			if x.NodeID != n.ID {
				continue
			}
			if row.LastFire.IsZero() {
				row.LastFire, row.LastTask = x.StartedAt, x.Task
			}
			if x.ParentExecutionID == 0 {
				row.Fires++
			}
		}
		d.Rows = append(d.Rows, row)
	}
	h.render(w, r, http.StatusOK, "nodes", page{Title: "Nodes", Now: v.Now, Data: d})
}
