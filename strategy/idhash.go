package strategy

import "github.com/easyjob-go/easyjob/repository"

// NameIDHash is the name of [IDHash].
const NameIDHash = "id_hash"

// IDHash accepts a task when task.ID % len(live) + 1 equals self's row
// number, so consecutive task ids go round-robin over the live nodes.
// It rejects when self is not live.
var IDHash = Func(acceptIDHash)

func acceptIDHash(live []repository.Node, task repository.Task, self repository.NodeID) bool {
	i := rowIndex(live, self)
	if i < 0 {
		return false
	}
	return mod(task.ID, int64(len(live))) == int64(i)
}
