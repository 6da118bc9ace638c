package strategy

import "github.com/easyjob-go/easyjob/repository"

// NameWeight is the name of [Weight].
const NameWeight = "weight"

// Weight accepts a task when task.ID % Σweight falls in self's band
// [Σ weights of the nodes before self, + self's weight), so over
// consecutive task ids each node gets a share in proportion to its
// Node.Weight. Weights below 1 count as 1; the sum must fit in an int64.
// It rejects when self is not live.
var Weight = Func(acceptWeight)

func acceptWeight(live []repository.Node, task repository.Task, self repository.NodeID) bool {
	i := rowIndex(live, self)
	if i < 0 {
		return false
	}
	start := sumWeights(live[:i])
	own := weightOf(live[i].Weight)
	total := start + own + sumWeights(live[i+1:])
	r := mod(task.ID, total)
	return start <= r && r < start+own
}

// sumWeights returns the sum of the weights of nodes, each at least 1.
// It indexes rather than ranging by value so as not to copy each Node.
func sumWeights(nodes []repository.Node) int64 {
	var sum int64
	for j := range nodes {
		sum += weightOf(nodes[j].Weight)
	}
	return sum
}

// weightOf returns a node's effective weight: w, but at least 1.
func weightOf(w int) int64 {
	return max(int64(w), 1)
}
