package strategy_test

import "github.com/easyjob-go/easyjob/repository"

// nodes builds a live set from ids, in the order given, with weight 1 and
// no counts.
func nodes(ids ...repository.NodeID) []repository.Node {
	live := make([]repository.Node, len(ids))
	for i, id := range ids {
		live[i] = repository.Node{ID: id, Weight: 1}
	}
	return live
}

func task(id repository.TaskID) repository.Task { return repository.Task{ID: id} }
