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

// Keep implements [Keeper]: a node keeps every task it holds while its
// count is within 5 % of the fair share (the mean); above that it keeps
// just the share of its tasks that brings it back to that bound, chosen
// by a hash of the task id so that it sheds the same tasks on every
// finish. Counts lag the load by up to their window (a minute), so
// shedding a fraction once, not everything the count says is too much,
// is what lets the split settle instead of swinging.
func (leastCount) Keep(live []repository.Node, task repository.Task, self repository.NodeID) bool {
	i := rowIndex(live, self)
	if i < 0 {
		return false
	}
	var sum int64
	for j := range live {
		sum += live[j].Counts
	}
	fair := sum / int64(len(live))
	bound := fair + fair/20 + 1
	own := live[i].Counts
	if own <= bound {
		return true
	}
	return spread(task.ID)*own < bound*spreadRange
}

// spreadRange is the range of spread.
const spreadRange = 1 << 10

// spread maps a task id to [0, spreadRange) by a multiplicative hash, so
// the tasks a node sheds do not follow the id order id_hash uses.
func spread(id repository.TaskID) int64 {
	return int64((uint64(id) * 0x9E3779B97F4A7C15) >> 54)
}

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
