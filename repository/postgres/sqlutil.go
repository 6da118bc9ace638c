package postgres

import (
	"sort"
	"strings"

	"github.com/easyjob-go/easyjob/repository"
)

// join separates VALUES rows (or any list of SQL fragments) with commas.
func join(parts []string) string { return strings.Join(parts, ", ") }

// fenceHolds is the fence test of a task row c against a batch row v(id,
// version, node_id). It is written as a CASE on purpose: inside CASE the
// planner neither uses the tests as index conditions nor proves a partial
// index from them, so every batch reaches its task rows by primary key
// only. As plain conditions they let it pick the doing-by-node index and
// read every held task of the node for each row of the batch.
const fenceHolds = `CASE WHEN c.status = 'doing' AND c.version = v.version AND c.node_id = v.node_id THEN true ELSE false END`

// lockFenced selects and locks, in id order, the task rows of a CTE named
// v(id, version, node_id, ...) whose fence still holds, reaching them by
// the id array given as its one argument. Batch writes update through it
// so that concurrent batches lock rows in one global order and cannot
// deadlock; after waiting for a lock, Postgres re-checks the fence on the
// row's newest version. NO KEY UPDATE (no write here changes a key) does
// not conflict with the KEY SHARE locks that inserting an execution takes
// on its task through the foreign key, in no set order: FOR UPDATE would
// deadlock with concurrent start batches.
const lockFenced = `SELECT c.id FROM easyjob_tasks c JOIN v ON c.id = v.id
  WHERE c.id = ANY(?::bigint[]) AND ` + fenceHolds + `
  ORDER BY c.id
  FOR NO KEY UPDATE OF c`

// claimArrays is a batch of claims column by column, for unnest.
func claimArrays(claims []repository.Claim) (ids, versions, nodes []int64) {
	for _, c := range claims {
		ids = append(ids, int64(c.ID))
		versions = append(versions, c.Version)
		nodes = append(nodes, int64(c.NodeID))
	}
	return ids, versions, nodes
}

// sortTasks orders tasks by id: RETURNING has no ORDER BY.
func sortTasks(ts []repository.Task) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].ID < ts[j].ID })
}

// oneTask returns the only task of ts or ErrTaskNotFound naming it.
func oneTask(ts []repository.Task, group, name string) (repository.Task, error) {
	if len(ts) == 0 {
		return repository.Task{}, notFound(group, name)
	}
	return ts[0], nil
}

// nonNil keeps an empty name list an empty array ('{}'), not NULL, so
// "name = ANY(...)" matches nothing rather than erroring or matching NULL.
func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
