package strategy

import (
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// AcceptOrSteal reports whether self should try to claim task: when s
// accepts it, or when the task has been due for overdue >= stealAfter and
// self is live. Views of the live set can differ between nodes for a
// moment, and a partitioning strategy could then leave a task accepted by
// nobody; stealing lets any live node take a task left unclaimed past the
// threshold, so no task starves. The store's version check still picks one
// winner. A stealAfter <= 0 disables stealing. A nil s means [Default].
func AcceptOrSteal(s Strategy, live []repository.Node, task repository.Task, self repository.NodeID, overdue, stealAfter time.Duration) bool {
	if s == nil {
		s = Default
	}
	if s.Accept(live, task, self) {
		return true
	}
	return stealAfter > 0 && overdue >= stealAfter && rowIndex(live, self) >= 0
}
