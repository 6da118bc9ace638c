package node

import (
	"context"
	"maps"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

// picker applies the node's strategy to its view of the live nodes: which
// due tasks the loader claims and which claims a finish keeps. It is the
// one place the runtime asks the strategy.
type picker struct {
	strat       strategy.Strategy
	readsCounts bool // the strategy reads Node.Counts (strategy.CountReader)
	stealAfter  time.Duration
	counts      *recentCounter // this node's executions, for its own count

	self  repository.NodeID // set once the node is registered, before any loop runs
	setID string            // id of the task set this node published, set with self
	live  atomic.Pointer[[]repository.Node]
	// sets holds the task sets of peers, by id (immutable once read), so
	// the strategy chooses only among the live nodes that can run a task.
	sets atomic.Pointer[map[string]map[string]bool]
}

func newPicker(s strategy.Strategy, stealAfter time.Duration, counts *recentCounter) *picker {
	return &picker{strat: s, readsCounts: strategy.ReadsCounts(s), stealAfter: stealAfter, counts: counts}
}

// setLive stores a new live view, sorted by id.
func (p *picker) setLive(live []repository.Node) { p.live.Store(&live) }

// liveView returns the last live view seen.
func (p *picker) liveView() []repository.Node {
	if v := p.live.Load(); v != nil {
		return *v
	}
	return nil
}

// isLive reports whether this node is in the live view.
func (p *picker) isLive() bool { return strategy.IsLive(p.liveView(), p.self) }

// view returns live as the strategy should see it: with this node's own
// count fresh from memory when the strategy reads counts (peers' counts
// are a heartbeat old, but a node's own need not be).
func (p *picker) view(live []repository.Node) []repository.Node {
	if !p.readsCounts {
		return live
	}
	out := append([]repository.Node(nil), live...)
	for i := range out {
		if out[i].ID == p.self {
			out[i].Counts = p.counts.sum(time.Now())
		}
	}
	return out
}

// keeps reports whether this node, holding t, should keep it on the
// current live view (strategy.Keeps).
func (p *picker) keeps(t repository.Task) bool {
	return strategy.Keeps(p.strat, p.able(p.view(p.liveView()), t.Handler), t, p.self)
}

// claims reports whether the loader should try to claim t, due at
// t.NextStartTime and seen at database time now, on view (see view): the
// strategy accepts it, or it was left unclaimed past the steal threshold
// (then stolen is true too).
func (p *picker) claims(view []repository.Node, t repository.Task, now time.Time) (ok, stolen bool) {
	able := p.able(view, t.Handler)
	if p.strat.Accept(able, t, p.self) {
		return true, false
	}
	ok = strategy.AcceptOrSteal(p.strat, able, t, p.self, now.Sub(t.DueAt()), p.stealAfter)
	return ok, ok
}

// able returns the nodes of view that can run the task named name: those
// that registered it (by their published task set), those that published
// no set, and those whose set is not known yet. While every node runs the
// same code (one set), view itself.
func (p *picker) able(view []repository.Node, name string) []repository.Node {
	mixed := false
	for i := range view {
		if view[i].TaskSet != "" && view[i].TaskSet != p.setID {
			mixed = true
			break
		}
	}
	if !mixed {
		return view
	}
	var sets map[string]map[string]bool
	if m := p.sets.Load(); m != nil {
		sets = *m
	}
	out := make([]repository.Node, 0, len(view))
	for _, nd := range view {
		set, known := sets[nd.TaskSet]
		if nd.TaskSet == "" || nd.TaskSet == p.setID || !known || set[name] {
			out = append(out, nd)
		}
	}
	return out
}

// learnSets reads the task sets of live nodes not seen before.
func (p *picker) learnSets(ctx context.Context, live []repository.Node, read func(context.Context, string) ([]string, error)) error {
	var known map[string]map[string]bool
	if m := p.sets.Load(); m != nil {
		known = *m
	}
	var next map[string]map[string]bool
	for _, nd := range live {
		if nd.TaskSet == "" || nd.TaskSet == p.setID || known[nd.TaskSet] != nil || next[nd.TaskSet] != nil {
			continue
		}
		names, err := read(ctx, nd.TaskSet)
		if err != nil {
			return err
		}
		if next == nil {
			next = maps.Clone(known)
			if next == nil {
				next = map[string]map[string]bool{}
			}
		}
		set := make(map[string]bool, len(names))
		for _, name := range names {
			set[name] = true
		}
		next[nd.TaskSet] = set
	}
	if next != nil {
		p.sets.Store(&next)
	}
	return nil
}
