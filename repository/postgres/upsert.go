package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// upsertLockClass is the first key of the two-key advisory lock that
// serialises UpsertTasks per group (the second key is hashtext(group)).
// Two-key advisory locks live in a key space apart from the one-key lock
// Migrate takes, so the two never collide. The value spells "ejob".
const upsertLockClass = 0x656a6f62

// UpsertTasks writes the registered forest of group in one transaction.
//
// N replicas start at once and register the same forest, so the group is
// serialised with a transaction-scoped advisory lock: the second replica
// sees the first one's rows and finds nothing to change, and locks no
// task row. The decisions (what changed, which version to write) are made
// in Go, on the rows to change locked FOR NO KEY UPDATE; that is clearer
// than one SQL statement and registration is rare. A doing row is updated without a version bump so that a deploy
// never fences a fire that is running.
func (s *Store) UpsertTasks(ctx context.Context, group string, defs []repository.TaskDef) ([]repository.Task, error) {
	if err := checkDefs(group, defs); err != nil {
		return nil, err
	}
	var out []repository.Task
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = upsertTx(ctx, tx, s.binary, group, defs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: upsert tasks of %q: %w", group, err)
	}
	return out, nil
}

func checkDefs(group string, defs []repository.TaskDef) error {
	seen := make(map[string]bool, len(defs))
	for _, d := range defs {
		if seen[d.Name] {
			return fmt.Errorf("easyjob/postgres: upsert tasks of %q: duplicate task %q", group, d.Name)
		}
		seen[d.Name] = true
	}
	return nil
}

func upsertTx(ctx context.Context, tx bun.Tx, binary bool, group string, defs []repository.TaskDef) ([]repository.Task, error) {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?::int, hashtext(?))`, upsertLockClass, group); err != nil {
		return nil, err
	}
	// Read without row locks: replicas that start with the code already
	// registered change nothing, and locking every row of the group would
	// stall the running nodes' claims and finishes for the whole
	// transaction (seconds with thousands of tasks). Rows to change are
	// locked and decided again below.
	stored, err := scanTasks(tx.QueryContext(ctx,
		`SELECT `+taskCols("t")+` FROM easyjob_tasks t WHERE t.group_name = ? ORDER BY t.id`, group))
	if err != nil {
		return nil, err
	}
	byName := make(map[string]repository.Task, len(stored)+len(defs))
	for _, t := range stored {
		byName[t.Name] = t
	}
	if err := checkNotDynamic(group, defs, byName); err != nil {
		return nil, err
	}
	if err := checkParents(group, defs, byName); err != nil {
		return nil, err
	}

	inserted, err := insertNew(ctx, tx, binary, group, defs, byName)
	if err != nil {
		return nil, err
	}
	isNew := make(map[string]bool, len(inserted))
	for _, t := range inserted {
		byName[t.Name] = t
		isNew[t.Name] = true
	}

	updates, err := lockAndPlan(ctx, tx, defs, byName, isNew)
	if err != nil {
		return nil, err
	}
	if err := forgetRevived(ctx, tx, updates, byName); err != nil {
		return nil, err
	}
	updated, err := writeUpdates(ctx, tx, updates)
	if err != nil {
		return nil, err
	}
	for _, t := range updated {
		byName[t.Name] = t
	}

	if len(inserted)+len(updated) > 0 {
		// Delivered at commit, so listeners read the new rows.
		if _, err := tx.ExecContext(ctx, `SELECT pg_notify('`+notifyChannel+`', ?)`, group); err != nil {
			return nil, err
		}
	}
	out := make([]repository.Task, len(defs))
	for i, d := range defs {
		out[i] = byName[d.Name]
	}
	return out, nil
}

// forgetRevived deletes the recorded definitions (easyjob_task_revisions)
// of the tombstones the registration revives: a new task under the old
// id, whose former life's definitions are not its own. One statement, and
// only when the registration revives any.
func forgetRevived(ctx context.Context, tx bun.Tx, updates []repository.Task, byName map[string]repository.Task) error {
	var ids []int64
	for _, u := range updates {
		if byName[u.Name].Status == repository.TaskRemoved {
			ids = append(ids, int64(u.ID))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM easyjob_task_revisions WHERE task_id = ANY(?::bigint[])`, pgdialect.Array(ids))
	return err
}

// lockAndPlan returns the rows to write for defs: it plans on the rows
// read, locks the stored rows that would change (in id order) and plans
// those again as locked, since a claim, a finish or an operator may have
// moved them since. Rows inserted by this transaction are its own.
func lockAndPlan(ctx context.Context, tx bun.Tx, defs []repository.TaskDef, byName map[string]repository.Task, isNew map[string]bool) ([]repository.Task, error) {
	var ids []int64
	for _, d := range defs {
		if _, ok := planUpdate(byName[d.Name], d, byName, isNew[d.Name]); ok && !isNew[d.Name] {
			ids = append(ids, int64(byName[d.Name].ID))
		}
	}
	if len(ids) > 0 {
		locked, err := scanTasks(tx.QueryContext(ctx, `SELECT `+taskCols("t")+` FROM easyjob_tasks t
WHERE t.id = ANY(?::bigint[]) ORDER BY t.id FOR NO KEY UPDATE`, pgdialect.Array(ids)))
		if err != nil {
			return nil, err
		}
		for _, t := range locked {
			byName[t.Name] = t
		}
	}
	lockedID := make(map[repository.TaskID]bool, len(ids))
	for _, id := range ids {
		lockedID[repository.TaskID(id)] = true
	}
	var updates []repository.Task
	for _, d := range defs {
		if !isNew[d.Name] && !lockedID[byName[d.Name].ID] {
			continue // unchanged when read: left as it is
		}
		if u, ok := planUpdate(byName[d.Name], d, byName, isNew[d.Name]); ok {
			updates = append(updates, u)
		}
	}
	return updates, nil
}

// checkNotDynamic fails before anything is written when a def names a
// runtime schedule (CreateSchedules): its definition is the store's, and a
// registration must not take it over. Its tombstone may be revived.
func checkNotDynamic(group string, defs []repository.TaskDef, stored map[string]repository.Task) error {
	for _, d := range defs {
		if t, ok := stored[d.Name]; ok && t.Dynamic && t.Status != repository.TaskRemoved {
			return fmt.Errorf("task %q in group %q is a runtime schedule: %w", d.Name, group, repository.ErrTaskExists)
		}
	}
	return nil
}

// checkParents fails before anything is written when a parent is neither
// registered now nor stored.
func checkParents(group string, defs []repository.TaskDef, stored map[string]repository.Task) error {
	names := make(map[string]bool, len(defs))
	for _, d := range defs {
		names[d.Name] = true
	}
	for _, d := range defs {
		if d.Parent == "" || names[d.Parent] {
			continue
		}
		if _, ok := stored[d.Parent]; !ok {
			return fmt.Errorf("parent of %q: %w", d.Name, notFound(group, d.Parent))
		}
	}
	return nil
}

// insertNew inserts the defs without a row, in one statement. Parents that
// are inserted in the same batch have no id yet; planUpdate links them.
func insertNew(ctx context.Context, tx bun.Tx, binary bool, group string, defs []repository.TaskDef, byName map[string]repository.Task) ([]repository.Task, error) {
	var c insertColumns
	for _, d := range defs {
		if _, ok := byName[d.Name]; ok {
			continue
		}
		opts, err := encodeOptions(d.Options)
		if err != nil {
			return nil, err
		}
		status := repository.TaskPending
		if d.Finished {
			status = repository.TaskFinished
		}
		var parent int64
		if p, ok := byName[d.Parent]; ok && d.Parent != "" {
			parent = int64(p.ID)
		}
		c.name = append(c.name, d.Name)
		c.cron = append(c.cron, d.Cron)
		c.parent = append(c.parent, parent)
		c.status = append(c.status, string(status))
		c.next = append(c.next, nullTimePtr(d.NextStartTime))
		c.options = append(c.options, opts)
	}
	if len(c.name) == 0 {
		return nil, nil
	}
	return scanTasks(tx.Tx.QueryContext(ctx, insertNewQuery,
		binaryArgs(binary, []any{group, c.name, c.cron, c.parent, c.status, c.next, c.options})...))
}

// insertNewQuery inserts the new rows of a registration from one array
// per column, in the order given: thousands of tasks in one short
// statement sent in binary, where a VALUES list of eight arguments per row
// took the client and the server most of a second to format and parse.
var insertNewQuery = dollarPlaceholders(`INSERT INTO easyjob_tasks AS t
  (group_name, name, handler, cron, code_cron, parent_id, status, next_start_time, options, created_at, updated_at)
SELECT ?::text, v.name, v.name, v.cron, v.cron, nullif(v.parent, 0), v.status, coalesce(v.next, now()), v.options::jsonb, now(), now()
FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[], ?::timestamptz[], ?::text[])
  WITH ORDINALITY AS v(name, cron, parent, status, next, options, ord)
ORDER BY v.ord
RETURNING ` + taskCols("t"))

// insertColumns are the new rows of a registration, column by column.
type insertColumns struct {
	name, cron, status, options []string
	parent                      []int64
	next                        []*time.Time
}

// planUpdate decides the row to write for def over cur: the link to a
// parent inserted in the same batch for a new row, repository.ApplyTaskDef
// for a stored one.
func planUpdate(cur repository.Task, d repository.TaskDef, byName map[string]repository.Task, inserted bool) (repository.Task, bool) {
	var parent repository.TaskID
	if d.Parent != "" {
		parent = byName[d.Parent].ID
	}
	if inserted {
		// Only the link to a parent inserted in the same batch is missing;
		// the row is new, so its version stays 1.
		if cur.ParentID == parent {
			return cur, false
		}
		cur.ParentID = parent
		return cur, true
	}
	u, write, touch := repository.ApplyTaskDef(cur, d, parent)
	if touch {
		u.UpdatedAt = time.Time{} // written as now()
	}
	return u, write
}

// writeUpdates writes the planned rows in one statement. The values are
// final (decided on locked rows), so the statement only assigns them.
func writeUpdates(ctx context.Context, tx bun.Tx, ts []repository.Task) ([]repository.Task, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	rows := make([]string, len(ts))
	args := make([]any, 0, 16*len(ts))
	for i, t := range ts {
		opts, err := encodeOptions(t.Options)
		if err != nil {
			return nil, err
		}
		var parent any
		if t.ParentID != 0 {
			parent = int64(t.ParentID)
		}
		var node any
		if t.NodeID != 0 {
			node = int64(t.NodeID)
		}
		rows[i] = "(?::bigint, ?::text, ?::jsonb, ?::bigint, ?::text, ?::timestamptz, ?::bigint, " +
			"?::text, ?::timestamptz, ?::timestamptz, ?::bigint, ?::int, ?::bool, ?::bool, ?::timestamptz, ?::text, " +
			"?::text, ?::bool, nullif(?::text, '')::jsonb, nullif(?::text, '')::jsonb)"
		args = append(args, int64(t.ID), t.Cron, opts, parent, string(t.Status), t.NextStartTime, t.Version,
			t.CodeCron, nullTime(t.OverriddenAt), nullTime(t.StaleSince), node, t.Attempt, t.Paused, t.TriggerRequested,
			nullTime(t.UpdatedAt), string(t.FireKind), t.Handler, t.Dynamic, t.Args, t.FireArgs)
	}
	q := `UPDATE easyjob_tasks t
SET cron = v.cron, options = v.options, parent_id = v.parent_id, status = v.status,
    next_start_time = v.next, version = v.version, code_cron = v.code_cron,
    overridden_at = v.overridden_at, stale_since = v.stale_since, node_id = v.node_id,
    attempt = v.attempt, paused = v.paused, trigger_requested = v.trigger_requested,
    fire_kind = v.fire_kind, updated_at = coalesce(v.updated_at, now()),
    handler = v.handler, dynamic = v.dynamic, args = v.args, fire_args = v.fire_args
FROM (VALUES ` + join(rows) + `) v(id, cron, options, parent_id, status, next, version,
    code_cron, overridden_at, stale_since, node_id, attempt, paused, trigger_requested, updated_at, fire_kind,
    handler, dynamic, args, fire_args)
WHERE t.id = v.id
RETURNING ` + taskCols("t")
	return scanTasks(tx.QueryContext(ctx, q, args...))
}
