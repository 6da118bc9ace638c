package strategy

import "github.com/easyjob-go/easyjob/repository"

// Strategy decides whether node self should try to claim task, given the
// group's live nodes sorted by node id. Implementations must be pure and
// safe for concurrent use.
type Strategy interface {
	Accept(live []repository.Node, task repository.Task, self repository.NodeID) bool
}

// Func adapts an ordinary function to the [Strategy] interface.
type Func func(live []repository.Node, task repository.Task, self repository.NodeID) bool

// Accept calls f(live, task, self).
func (f Func) Accept(live []repository.Node, task repository.Task, self repository.NodeID) bool {
	return f(live, task, self)
}

// CountReader is implemented by strategies that read [repository.Node]
// Counts (such as [LeastCount]). The runtime asks it instead of knowing
// strategies by name: while it fires tasks it refreshes the peers' counts
// on every heartbeat, and it passes its own count fresh from memory, since
// a heartbeat-old own count makes such a strategy overshoot.
type CountReader interface {
	Strategy
	ReadsCounts() bool
}

// ReadsCounts reports whether s reads Node.Counts (see [CountReader]).
func ReadsCounts(s Strategy) bool {
	r, ok := s.(CountReader)
	return ok && r.ReadsCounts()
}

// Keeper is implemented by strategies that judge a task a node already
// holds more leniently than one it would newly claim. With a strategy
// that reads changing inputs (counts), the same rule for both moves tasks
// back and forth every time the inputs cross; a lenient keep lets the
// split settle. The runtime asks Keep when a finish decides whether to
// keep the claim for the next fire, and Accept when the loader claims.
type Keeper interface {
	Strategy
	Keep(live []repository.Node, task repository.Task, self repository.NodeID) bool
}

// Keeps reports whether self, holding task, should keep it: Keep of a
// [Keeper], Accept of any other strategy.
func Keeps(s Strategy, live []repository.Node, task repository.Task, self repository.NodeID) bool {
	if k, ok := s.(Keeper); ok {
		return k.Keep(live, task, self)
	}
	return s.Accept(live, task, self)
}

// IsLive reports whether self is in live.
func IsLive(live []repository.Node, self repository.NodeID) bool {
	return rowIndex(live, self) >= 0
}

// rowIndex returns the 0-based index of self in live (its row number
// minus one), or -1 when self is not live.
func rowIndex(live []repository.Node, self repository.NodeID) int {
	for i := range live {
		if live[i].ID == self {
			return i
		}
	}
	return -1
}

// mod returns id mod n in [0, n) for n > 0, also for negative ids, so that
// a negative task id still maps to exactly one node.
func mod(id repository.TaskID, n int64) int64 {
	m := int64(id) % n
	if m < 0 {
		m += n
	}
	return m
}
