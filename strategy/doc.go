// Package strategy holds the claim strategies of easy-job: the rules by
// which a node decides whether it should try to claim a due task.
//
// A strategy is a pure function of (live nodes, task, self): it does no
// I/O and starts no goroutines. live is the group's live nodes sorted by
// node id; a node's row number is its 1-based index in live. Every node
// evaluates the same function over (ideally) the same live set, so for a
// fixed live set the partitioning strategies (id_hash, least_count,
// weight) accept each task on exactly one node.
//
// Views of the live set can differ for a moment between nodes. That is
// safe, because the claim itself is a versioned compare-and-set in the
// store that picks one winner. It is kept live by [AcceptOrSteal]: a due
// task left unclaimed longer than a steal threshold may be claimed by any
// live node.
//
// Built-in strategies, by name:
//
//	default      always accepts: first come, first served
//	id_hash      task.ID % len(live) + 1 == rownum(self)
//	least_count  self has the fewest finished executions (Node.Counts);
//	             ties are split by id_hash among the tied nodes
//	weight       task.ID % Σweight falls in self's band
//	             [Σ weights of nodes before self, + own weight)
//
// Every built-in except default rejects the task when self is not in live:
// a node that is not (or no longer) live must not use a stale view of the
// group to claim work, since its row number there means nothing to its
// peers. default needs no view at all, so it still accepts.
//
// Users may add strategies by name with [Register] and find them with
// [Lookup]. The registry is the package's one piece of global state,
// guarded by a mutex, in the same spirit as database/sql driver
// registration.
package strategy
