package postgres

import (
	"sort"
	"strings"

	"github.com/easyjob-go/easyjob/repository"
)

// join separates VALUES rows (or any list of SQL fragments) with commas.
func join(parts []string) string { return strings.Join(parts, ", ") }

// claimValues renders claims as VALUES rows (id, version, node_id) with
// their placeholder arguments, the shape every fenced batch joins against.
func claimValues(claims []repository.Claim) (string, []any) {
	rows := make([]string, len(claims))
	args := make([]any, 0, 3*len(claims))
	for i, c := range claims {
		rows[i] = "(?::bigint, ?::bigint, ?::bigint)"
		args = append(args, int64(c.ID), c.Version, int64(c.NodeID))
	}
	return join(rows), args
}

// lockFenced selects and locks, in id order, the task rows of a CTE named
// v(id, version, node_id, ...) whose fence still holds. Batch writes join
// it instead of v so that concurrent batches lock rows in one global order
// and cannot deadlock; after waiting for a lock, Postgres re-checks the
// fence on the row's newest version. NO KEY UPDATE (no write here changes
// a key) does not conflict with the KEY SHARE locks that inserting an
// execution takes on its task through the foreign key, in no set order:
// FOR UPDATE would deadlock with concurrent start batches.
const lockFenced = `SELECT c.id, c.version, c.node_id FROM easyjob_tasks c
  JOIN v ON c.id = v.id AND c.version = v.version AND c.node_id = v.node_id
  WHERE c.status = 'doing'
  ORDER BY c.id
  FOR NO KEY UPDATE OF c`

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
