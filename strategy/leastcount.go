package strategy

import "github.com/easyjob-go/easyjob/repository"

// NameLeastCount is the name of [LeastCount].
const NameLeastCount = "least_count"

// LeastCount accepts a task when self has the fewest finished executions
// (Node.Counts) among the live nodes. Ties are split by id_hash among the
// tied nodes: task.ID % len(tied) + 1 must equal self's row number within
// the tied nodes (kept in id order). Tied are the nodes whose count is at
// most the average or within 5 % of the minimum: without that slack
// the single least node would take every task at once, overshoot, and hand
// them all to the next, instead of settling on an even split. It rejects
// when self is not live. It is a [CountReader].
var LeastCount Strategy = leastCount{}

type leastCount struct{}

// Accept implements [Strategy].
func (leastCount) Accept(live []repository.Node, task repository.Task, self repository.NodeID) bool {
	return acceptLeastCount(live, task, self)
}

// ReadsCounts implements [CountReader]: LeastCount balances on Node.Counts.
func (leastCount) ReadsCounts() bool { return true }

// tieLimit returns the highest count that still ties for least.
func tieLimit(live []repository.Node) int64 {
	least, sum := live[0].Counts, int64(0)
	for j := range live {
		least = min(least, live[j].Counts)
		sum += live[j].Counts
	}
	return max(least+least/20, sum/int64(len(live)))
}

func acceptLeastCount(live []repository.Node, task repository.Task, self repository.NodeID) bool {
	i := rowIndex(live, self)
	if i < 0 {
		return false
	}
	limit := tieLimit(live)
	if live[i].Counts > limit {
		return false // others have clearly fewer
	}
	var tied, rank int64 // nodes tied for least; those of them before self
	for j := range live {
		if live[j].Counts <= limit {
			if j < i {
				rank++
			}
			tied++
		}
	}
	return mod(task.ID, tied) == rank
}
