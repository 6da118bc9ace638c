package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// RegisterNode inserts a node row. Ids come from a sequence, so they grow
// with registration time as the recover loop's "next-higher id" needs.
// started_at and heartbeat_at are both the statement's now().
func (s *Store) RegisterNode(ctx context.Context, group, name string, weight int) (repository.Node, error) {
	q := `INSERT INTO easyjob_nodes AS n (group_name, name, weight, started_at, heartbeat_at)
VALUES (?, ?, greatest(?::int, 1), now(), now())
RETURNING ` + nodeCols("n")
	nodes, err := scanNodes(s.db.QueryContext(ctx, q, group, name, weight))
	if err != nil {
		return repository.Node{}, fmt.Errorf("easyjob/postgres: register node %q: %w", name, err)
	}
	return nodes[0], nil
}

// Heartbeat upserts the node by id, on the connection set aside for it
// (see priorityConn). A row a peer expired meanwhile (a long
// pause) is re-created under the same id, so this node keeps its identity
// and its claims stay attributable to it.
func (s *Store) Heartbeat(ctx context.Context, n repository.Node) (repository.Node, error) {
	q := `INSERT INTO easyjob_nodes AS n (id, group_name, name, weight, counts, started_at, heartbeat_at, leaving, task_set)
VALUES (?, ?, ?, greatest(?::int, 1), ?, coalesce(?::timestamptz, now()), now(), ?, ?)
ON CONFLICT (id) DO UPDATE SET
  group_name = excluded.group_name, name = excluded.name, weight = excluded.weight,
  counts = excluded.counts, heartbeat_at = now(), leaving = excluded.leaving, task_set = excluded.task_set
RETURNING ` + nodeCols("n")
	nodes, err := s.prio.nodes(ctx, s.db, q,
		int64(n.ID), n.Group, n.Name, n.Weight, n.Counts, nullTime(n.StartedAt), n.Leaving, n.TaskSet)
	if err != nil {
		return repository.Node{}, fmt.Errorf("easyjob/postgres: heartbeat node %d: %w", n.ID, err)
	}
	return nodes[0], nil
}

// DeleteNode removes the row; an absent row is not an error because a
// peer may have expired it already.
func (s *Store) DeleteNode(ctx context.Context, id repository.NodeID) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM easyjob_nodes WHERE id = ?`, int64(id)); err != nil {
		return fmt.Errorf("easyjob/postgres: delete node %d: %w", id, err)
	}
	return nil
}

// LiveNodes lists the nodes of group that heartbeated within `within` by
// the database clock, ordered by id (strategies number them by position).
func (s *Store) LiveNodes(ctx context.Context, group string, within time.Duration) ([]repository.Node, error) {
	q := `SELECT ` + nodeCols("n") + ` FROM easyjob_nodes n
WHERE n.group_name = ? AND n.heartbeat_at >= now() - (?::bigint * interval '1 microsecond')
  AND NOT n.leaving
ORDER BY n.id`
	nodes, err := s.prio.nodes(ctx, s.db, q, group, micros(within))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: live nodes of %q: %w", group, err)
	}
	return nodes, nil
}

// Nodes lists every node row of group ordered by id.
func (s *Store) Nodes(ctx context.Context, group string) ([]repository.Node, error) {
	q := `SELECT ` + nodeCols("n") + ` FROM easyjob_nodes n WHERE n.group_name = ? ORDER BY n.id`
	nodes, err := scanNodes(s.db.QueryContext(ctx, q, group))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: nodes of %q: %w", group, err)
	}
	return nodes, nil
}

// ExpireNodes deletes rows silent for longer than deadFor. A row still
// named by a doing task is kept: recovery must first see whose task it was.
func (s *Store) ExpireNodes(ctx context.Context, group string, deadFor time.Duration) (int, error) {
	q := `DELETE FROM easyjob_nodes n
WHERE n.group_name = ? AND n.heartbeat_at < now() - (?::bigint * interval '1 microsecond')
  AND NOT EXISTS (SELECT 1 FROM easyjob_tasks t WHERE t.node_id = n.id AND t.status = 'doing')`
	res, err := s.db.ExecContext(ctx, q, group, micros(deadFor))
	if err != nil {
		return 0, fmt.Errorf("easyjob/postgres: expire nodes of %q: %w", group, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// PublishTaskSet stores names under their set id; a set already stored is
// left as it is (the id is a hash of the names).
func (s *Store) PublishTaskSet(ctx context.Context, names []string) (string, error) {
	id := repository.TaskSetID(names)
	sorted := slices.Compact(slices.Sorted(slices.Values(names)))
	q := `INSERT INTO easyjob_task_sets (id, names) VALUES (?, ?::text[]) ON CONFLICT (id) DO NOTHING`
	if _, err := s.db.ExecContext(ctx, q, id, pgdialect.Array(sorted)); err != nil {
		return "", fmt.Errorf("easyjob/postgres: publish task set of %d names: %w", len(sorted), err)
	}
	return id, nil
}

// TaskSet reads the names published under id.
func (s *Store) TaskSet(ctx context.Context, id string) ([]string, error) {
	var names []string
	err := s.db.QueryRowContext(ctx, `SELECT names FROM easyjob_task_sets WHERE id = ?`, id).Scan(pgdialect.Array(&names))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("easyjob/postgres: task set %q: %w", id, repository.ErrTaskSetNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: task set %q: %w", id, err)
	}
	return names, nil
}
