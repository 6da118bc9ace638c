package strategy

import "github.com/easyjob-go/easyjob/repository"

// NameLeastCount is the name of [LeastCount].
const NameLeastCount = "least_count"

// LeastCount accepts a task when self has the fewest finished executions
// (Node.Counts) among the live nodes. Ties are split by id_hash among the
// tied nodes: task.ID % len(tied) + 1 must equal self's row number within
// the tied nodes (kept in id order). It rejects when self is not live.
var LeastCount = Func(acceptLeastCount)

func acceptLeastCount(live []repository.Node, task repository.Task, self repository.NodeID) bool {
	i := rowIndex(live, self)
	if i < 0 {
		return false
	}
	own := live[i].Counts
	var tied, rank int64 // nodes with own's count; those of them before self
	for j := range live {
		switch c := live[j].Counts; {
		case c < own:
			return false // someone has fewer
		case c == own:
			if j < i {
				rank++
			}
			tied++
		}
	}
	return mod(task.ID, tied) == rank
}
