package easyjob

import (
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

	self repository.NodeID // set once the node is registered, before any loop runs
	live atomic.Pointer[[]repository.Node]
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

// keeps reports whether the strategy still gives t to this node on the
// current live view.
func (p *picker) keeps(t repository.Task) bool {
	return p.strat.Accept(p.view(p.liveView()), t, p.self)
}

// claims reports whether the loader should try to claim t, due at
// t.NextStartTime and seen at database time now, on view (see view): the
// strategy accepts it, or it was left unclaimed past the steal threshold.
func (p *picker) claims(view []repository.Node, t repository.Task, now time.Time) bool {
	return strategy.AcceptOrSteal(p.strat, view, t, p.self, now.Sub(t.NextStartTime), p.stealAfter)
}
