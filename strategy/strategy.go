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
