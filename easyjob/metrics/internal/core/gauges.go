package core

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/observe"
)

// GaugeTTL is how long a node's last EventGauges counts: after it, the
// node no longer counts (it stopped, or this process runs it no more). EventGauges comes
// after every heartbeat (default 1 s).
const GaugeTTL = time.Minute

// GroupGauges are the gauges of the nodes of one group in this process:
// claims held and jobs running summed, live nodes as the largest view.
type GroupGauges struct {
	Group            string
	Held, Busy, Live int
}

// Gauges keeps the last EventGauges of each node of this process.
type Gauges struct {
	mu    sync.Mutex
	nodes map[int64]gaugeEntry
}

type gaugeEntry struct {
	e  observe.Event
	at time.Time
}

// Set records e, an EventGauges.
func (g *Gauges) Set(e observe.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.nodes == nil {
		g.nodes = map[int64]gaugeEntry{}
	}
	g.nodes[e.Node] = gaugeEntry{e: e, at: time.Now()}
}

// Groups returns the gauges by group, sorted by group, forgetting nodes
// silent for GaugeTTL.
func (g *Gauges) Groups() []GroupGauges {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []GroupGauges
	for id, n := range g.nodes {
		if time.Since(n.at) > GaugeTTL {
			delete(g.nodes, id)
			continue
		}
		i := slices.IndexFunc(out, func(x GroupGauges) bool { return x.Group == n.e.Group })
		if i < 0 {
			out = append(out, GroupGauges{Group: n.e.Group})
			i = len(out) - 1
		}
		out[i].Held += n.e.Held
		out[i].Busy += n.e.Busy
		out[i].Live = max(out[i].Live, n.e.Live)
	}
	slices.SortFunc(out, func(a, b GroupGauges) int { return cmp.Compare(a.Group, b.Group) })
	return out
}

// NodeLister reads a group's node table: *easyjob.Client is one.
type NodeLister interface {
	Group() string
	Nodes(ctx context.Context) ([]easyjob.NodeInfo, error)
}

// Node states, the values of the state label of easyjob_nodes.
const (
	NodeLive    = "live"    // heartbeating within LiveAfter, not leaving
	NodeLeaving = "leaving" // shutting down gracefully, not dead yet
	NodeSuspect = "suspect" // silent past LiveAfter, not yet past DeadAfter
	NodeDead    = "dead"    // silent past DeadAfter (its tasks are recovered)
)

// NodeStates lists the states in label order.
var NodeStates = [...]string{NodeLive, NodeLeaving, NodeSuspect, NodeDead}

// GroupNodes counts the node rows of one group by state (indexed like
// NodeStates).
type GroupNodes struct {
	Group  string
	Counts [len(NodeStates)]int
}

// Nodes reads node states through listers, at most once per TTL, each
// read bounded by Timeout.
type Nodes struct {
	Listers []NodeLister
	Timeout time.Duration
	TTL     time.Duration

	mu     sync.Mutex
	at     time.Time
	cached []GroupNodes
	err    error
}

// States returns the node counts of every lister's group (a group whose
// read failed is left out) and the first error.
func (n *Nodes) States(ctx context.Context) ([]GroupNodes, error) {
	if len(n.Listers) == 0 {
		return nil, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.at.IsZero() && time.Since(n.at) < n.TTL {
		return n.cached, n.err
	}
	n.cached, n.err = nil, nil
	for _, l := range n.Listers {
		rctx, cancel := context.WithTimeout(ctx, n.Timeout)
		rows, err := l.Nodes(rctx)
		cancel()
		if err != nil {
			if n.err == nil {
				n.err = err
			}
			continue
		}
		g := GroupNodes{Group: l.Group()}
		for _, r := range rows {
			switch {
			case r.Dead:
				g.Counts[3]++
			case r.Leaving:
				g.Counts[1]++
			case r.Live:
				g.Counts[0]++
			default:
				g.Counts[2]++
			}
		}
		n.cached = append(n.cached, g)
	}
	n.at = time.Now()
	return n.cached, n.err
}

// Listers converts a package's own lister interface to NodeLister.
func Listers[L NodeLister](ls []L) []NodeLister {
	out := make([]NodeLister, len(ls))
	for i, l := range ls {
		out[i] = l
	}
	return out
}
