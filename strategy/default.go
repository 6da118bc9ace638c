package strategy

import "github.com/easyjob-go/easyjob/repository"

// NameDefault is the name of [Default]; the empty name means it too.
const NameDefault = "default"

// Default accepts every task on every node, live or not: first come, first
// served, and the store's version check picks the one winner.
var Default = Func(acceptDefault)

func acceptDefault([]repository.Node, repository.Task, repository.NodeID) bool {
	return true
}
