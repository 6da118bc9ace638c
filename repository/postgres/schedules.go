package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// CreateSchedules inserts the runtime schedules defs into group in one
// transaction, all or nothing.
//
// It takes the group's registration lock (UpsertTasks, RemoveTask) in
// shared mode: creations run side by side, but never between a
// registration's read of the group and its writes, so a registration
// either sees a schedule and refuses its name or came first and took it.
// The names are then read and locked: one held by a row that is not
// removed fails the call with ErrTaskExists naming it, before anything is
// written; a removed row (a tombstone kept for its history) is revived
// under its id (the definitions of its former life deleted first). One
// statement then revives the tombstones, inserts the new rows from one
// array per column (a batch of thousands costs one short statement),
// records an audit entry and revision 1 per row and wakes the group. A name
// a concurrent creation took meanwhile is skipped by the insert (ON
// CONFLICT DO NOTHING) and fails the call as taken.
func (s *Store) CreateSchedules(ctx context.Context, group string, defs []repository.ScheduleDef) ([]repository.Task, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	c, err := scheduleColumns(group, defs)
	if err != nil {
		return nil, err
	}
	var out []repository.Task
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = s.createTx(ctx, tx, group, defs, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: create %d schedules in group %q: %w", len(defs), group, err)
	}
	return out, nil
}

// createColumns are the rows of a CreateSchedules, column by column.
type createColumns struct {
	name, handler, cron, args, options, status []string
	paused                                     []bool
	next                                       []*time.Time
	revive                                     []int64 // the tombstone's id, 0 for a new row
}

// scheduleColumns checks defs (distinct names, JSON arguments) and lays
// them out for unnest. Options are encoded once per distinct set: a batch
// shares a few.
func scheduleColumns(group string, defs []repository.ScheduleDef) (createColumns, error) {
	n := len(defs)
	c := createColumns{
		name: make([]string, 0, n), handler: make([]string, 0, n), cron: make([]string, 0, n),
		args: make([]string, 0, n), options: make([]string, 0, n), status: make([]string, 0, n),
		paused: make([]bool, 0, n), next: make([]*time.Time, 0, n), revive: make([]int64, n),
	}
	if err := repository.CheckScheduleDefs(group, defs); err != nil {
		return c, err
	}
	encoded := map[repository.TaskOptions]string{}
	for _, d := range defs {
		opts, ok := encoded[d.Options]
		if !ok {
			var err error
			if opts, err = encodeOptions(d.Options); err != nil {
				return c, err
			}
			encoded[d.Options] = opts
		}
		c.name = append(c.name, d.Name)
		c.handler = append(c.handler, d.Handler)
		c.cron = append(c.cron, d.Cron)
		c.args = append(c.args, d.Args)
		c.options = append(c.options, opts)
		c.status = append(c.status, string(createdStatus(d)))
		c.paused = append(c.paused, d.Paused)
		c.next = append(c.next, nullTimePtr(d.NextStartTime))
	}
	return c, nil
}

// createdStatus is the status a created schedule starts in: finished
// when its cron has no fire, else paused when created paused (as Pause
// leaves a pending row), else pending.
func createdStatus(d repository.ScheduleDef) repository.TaskStatus {
	switch {
	case d.Finished:
		return repository.TaskFinished
	case d.Paused:
		return repository.TaskPaused
	}
	return repository.TaskPending
}

func (s *Store) createTx(ctx context.Context, tx bun.Tx, group string, defs []repository.ScheduleDef, c createColumns) ([]repository.Task, error) {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared(?::int, hashtext(?))`, upsertLockClass, group); err != nil {
		return nil, err
	}
	taken, err := lockNames(ctx, tx, group, c.name)
	if err != nil {
		return nil, err
	}
	revive := 0
	for i, name := range c.name {
		if t, ok := taken[name]; ok {
			if t.status != string(repository.TaskRemoved) {
				return nil, nameTaken(group, name)
			}
			c.revive[i], revive = t.id, 1
		}
	}
	args := []any{
		c.name, c.handler, c.cron, c.args, c.options, c.status, c.paused, c.next, c.revive,
		group, group,
	}
	audit := 0
	if e, ok := repository.AuditFrom(ctx); ok {
		audit = 1
		args = append(args, auditArgs(e)...)
	}
	args = append(args, revisionActor(ctx)...)
	if revive == 1 {
		// A revived tombstone is a new task under the old id: the
		// definitions of its former life go (its revision restarts at 1).
		if _, err := tx.ExecContext(ctx, `DELETE FROM easyjob_task_revisions WHERE task_id = ANY(?::bigint[])`,
			pgdialect.Array(c.revive)); err != nil {
			return nil, err
		}
	}
	q := createQueries[revive][audit]
	rows, err := scanTasks(tx.Tx.QueryContext(ctx, q, binaryArgs(s.binary, args)...))
	if err != nil {
		return nil, err
	}
	byName := make(map[string]repository.Task, len(rows))
	for _, t := range rows {
		byName[t.Name] = t
	}
	out := make([]repository.Task, len(defs))
	for i, d := range defs {
		t, ok := byName[d.Name]
		if !ok { // a concurrent creation took the name after it was read
			return nil, nameTaken(group, d.Name)
		}
		out[i] = t
	}
	return out, nil
}

// takenName is a stored row holding a name a creation asks for.
type takenName struct {
	id     int64
	status string
}

// lockNames reads and locks, in id order, the rows of group holding any of
// names: a tombstone to revive stays one until the creation commits.
func lockNames(ctx context.Context, tx bun.Tx, group string, names []string) (map[string]takenName, error) {
	rows, err := tx.QueryContext(ctx, `SELECT t.id, t.name, t.status FROM easyjob_tasks t
WHERE t.group_name = ? AND t.name = ANY(?::text[])
ORDER BY t.id FOR NO KEY UPDATE`, group, pgdialect.Array(names))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	taken := map[string]takenName{}
	for rows.Next() {
		var t takenName
		var name string
		if err := rows.Scan(&t.id, &name, &t.status); err != nil {
			return nil, err
		}
		taken[name] = t
	}
	return taken, rows.Err()
}

// nameTaken names the taken name in an error wrapping ErrTaskExists.
func nameTaken(group, name string) error {
	return fmt.Errorf("task %q in group %q: %w", name, group, repository.ErrTaskExists)
}

// createSQL inserts the new rows (i) of a CreateSchedules from one array
// per column, in the order given, and wakes the group (n, run by the count
// in the final WHERE). %[2]s revives the tombstones first (r, when the batch
// has any) and %[3]s names the rows written (w); %[4]s is the audit CTE, if
// any; rv records revision 1 of every row written (revisionSQL), one
// INSERT ... SELECT of the rows just written. A revived row keeps its id,
// created_at and last result, and takes everything else from its
// definition, version+1, as a registration revives one. due_at follows
// next_start_time by the trigger of migration 0008.
var createSQL = `WITH v AS (
  SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bool[],
    ?::timestamptz[], ?::bigint[])
    WITH ORDINALITY AS v(name, handler, cron, args, options, status, paused, next, revive, ord)
),%[2]s
i AS (
  INSERT INTO easyjob_tasks AS t
    (group_name, name, handler, cron, code_cron, args, options, status, paused, next_start_time,
     dynamic, revision, created_at, updated_at)
  SELECT ?::text, v.name, v.handler, v.cron, v.cron, nullif(v.args, '')::jsonb, v.options::jsonb, v.status, v.paused,
    coalesce(v.next, now()), true, 1, now(), now()
  FROM v WHERE v.revive = 0
  ORDER BY v.ord
  ON CONFLICT (group_name, name) DO NOTHING
  RETURNING %[1]s
),
w AS (%[3]s),
n AS (SELECT pg_notify('` + notifyChannel + `', ?::text))%[4]s,
rv AS (` + revisionSQL("w") + `)
SELECT * FROM w WHERE (SELECT count(*) FROM n) >= 0`

// createRevive is the CTE of createSQL that revives the tombstones of a
// batch: one join of the batch with the rows by id.
const createRevive = `
r AS (
  UPDATE easyjob_tasks t SET
    handler = v.handler, cron = v.cron, code_cron = v.cron, overridden_at = NULL,
    args = nullif(v.args, '')::jsonb, fire_args = NULL, options = v.options::jsonb,
    status = v.status, paused = v.paused, next_start_time = coalesce(v.next, now()),
    parent_id = NULL, node_id = NULL, attempt = 1, trigger_requested = false, fire_kind = '',
    stale_since = NULL, dynamic = true, revision = 1, version = t.version + 1, updated_at = now()
  FROM v
  WHERE v.revive <> 0 AND t.id = v.revive AND t.status = 'removed'
  RETURNING %[1]s
),`

// createAudit records one entry per written row: the context's entry,
// action "create" and a detail naming the handler and cron unless it
// gives its own.
const createAudit = `,
a AS (
  INSERT INTO easyjob_audit (group_name, task, actor, via, origin, action, detail)
  SELECT w.group_name, w.name, ?::text, ?::text, ?::text, coalesce(nullif(?::text, ''), 'create'),
    coalesce(nullif(?::text, ''), 'handler ' || w.handler || ' cron ' || w.cron)
  FROM w
)`

// createQueries are createSQL as sent, by [revive][audit]: a batch without
// tombstones (the common one) neither joins nor gathers two CTEs' rows.
var createQueries = func() (q [2][2]string) {
	for revive := range 2 {
		for audit := range 2 {
			r, w, a := "", "SELECT * FROM i", ""
			if revive == 1 {
				r, w = fmt.Sprintf(createRevive, taskCols("t")), "SELECT * FROM r UNION ALL SELECT * FROM i"
			}
			if audit == 1 {
				a = createAudit
			}
			q[revive][audit] = dollarPlaceholders(fmt.Sprintf(createSQL, taskCols("t"), r, w, a))
		}
	}
	return q
}()

// UpdateSchedule replaces the definition of the runtime schedule name in
// one statement, in the manner of Reschedule: a doing row keeps its
// version (the running fire is not fenced) and its finish, which ran the
// older revision, leaves the new next fire in place; any other row takes
// version+1 and the new next fire as a first attempt of the cron's (a
// triggered fire, arguments and all, is replaced). The pause is kept: a
// paused row stays paused, a finished one becomes pending (paused when
// its flag is set), or stays finished when the new cron has no fire
// (def.Finished). The same statement records the new revision. When
// nothing matched, a second read tells a registered
// task (ErrNotDynamic) from a missing one (ErrTaskNotFound).
func (s *Store) UpdateSchedule(ctx context.Context, group, name string, def repository.ScheduleDef) (repository.Task, error) {
	if err := repository.CheckArgs(fmt.Sprintf("update schedule %q in group %q", name, group), def.Args); err != nil {
		return repository.Task{}, err
	}
	opts, err := encodeOptions(def.Options)
	if err != nil {
		return repository.Task{}, err
	}
	ctx = repository.AuditDefaults(ctx, "update", "handler "+def.Handler+" cron "+def.Cron)
	q := `UPDATE easyjob_tasks t SET
  handler = ?::text, cron = ?::text, code_cron = ?::text, overridden_at = NULL,
  args = nullif(?::text, '')::jsonb, options = ?::jsonb,
  ` + retimeSQL + `,
  status = CASE
    WHEN t.status = 'doing' THEN 'doing'
    WHEN ?::bool AND t.status IN ('pending', 'finished') THEN 'finished'
    WHEN t.paused THEN 'paused'
    ELSE 'pending' END,
  attempt = CASE WHEN t.status = 'doing' THEN t.attempt ELSE 1 END,
  fire_kind = CASE WHEN t.status = 'doing' THEN t.fire_kind ELSE '' END,
  fire_args = CASE WHEN t.status = 'doing' THEN t.fire_args END,
  revision = t.revision + 1,
  version = t.version + CASE WHEN t.status = 'doing' THEN 0 ELSE 1 END,
  updated_at = now()
WHERE t.group_name = ? AND t.name = ? AND t.status <> 'removed' AND t.dynamic
RETURNING ` + taskCols("t")
	fires := pgdialect.Array(def.UpdateFires())
	t, err := s.control(ctx, "update schedule", group, name, q, true, true,
		def.Handler, def.Cron, def.Cron, def.Args, opts, fires, fires, def.Finished, group, name)
	if !errors.Is(err, repository.ErrTaskNotFound) {
		return t, err
	}
	var registered bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM easyjob_tasks t
WHERE t.group_name = ? AND t.name = ? AND t.status <> 'removed' AND NOT t.dynamic)`, group, name).Scan(&registered); err != nil {
		return repository.Task{}, fmt.Errorf("easyjob/postgres: update schedule %q in group %q: %w", name, group, err)
	}
	if registered {
		return repository.Task{}, fmt.Errorf("easyjob/postgres: update schedule %q in group %q: a task registered in code: %w",
			name, group, repository.ErrNotDynamic)
	}
	return repository.Task{}, err
}

// PublishHandlers upserts the handler kinds of group in one statement:
// the newest schema of each kind wins. A kind given twice keeps its last
// schema; an empty schema is stored as {} (any arguments).
func (s *Store) PublishHandlers(ctx context.Context, group string, hs []repository.HandlerDef) error {
	if len(hs) == 0 {
		return nil
	}
	kinds, schemas, err := handlerColumns(group, hs)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO easyjob_handlers AS h (group_name, kind, schema, updated_at)
SELECT ?::text, v.kind, v.schema::jsonb, now() FROM unnest(?::text[], ?::text[]) AS v(kind, schema)
ON CONFLICT (group_name, kind) DO UPDATE SET schema = excluded.schema, updated_at = excluded.updated_at`,
		group, pgdialect.Array(kinds), pgdialect.Array(schemas))
	if err != nil {
		return fmt.Errorf("easyjob/postgres: publish %d handlers of group %q: %w", len(kinds), group, err)
	}
	return nil
}

// handlerColumns checks hs and lays them out by kind, the last schema of a
// kind given twice winning (one row may not be upserted twice in one
// statement).
func handlerColumns(group string, hs []repository.HandlerDef) (kinds, schemas []string, err error) {
	at := make(map[string]int, len(hs))
	for _, h := range hs {
		schema := string(h.Schema)
		if strings.TrimSpace(schema) == "" {
			schema = "{}"
		}
		if !json.Valid([]byte(schema)) {
			return nil, nil, fmt.Errorf("easyjob/postgres: publish handler %q of group %q: schema is not JSON", h.Kind, group)
		}
		if i, ok := at[h.Kind]; ok {
			schemas[i] = schema
			continue
		}
		at[h.Kind] = len(kinds)
		kinds, schemas = append(kinds, h.Kind), append(schemas, schema)
	}
	return kinds, schemas, nil
}

// Handlers lists the handler kinds published for group, by kind (byte
// order).
func (s *Store) Handlers(ctx context.Context, group string) ([]repository.HandlerDef, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT h.kind, h.schema::text FROM easyjob_handlers h
WHERE h.group_name = ? ORDER BY h.kind COLLATE "C"`, group)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: handlers of group %q: %w", group, err)
	}
	defer rows.Close()
	var out []repository.HandlerDef
	for rows.Next() {
		var h repository.HandlerDef
		var schema string
		if err := rows.Scan(&h.Kind, &schema); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: handlers of group %q: %w", group, err)
		}
		h.Schema = json.RawMessage(schema)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: handlers of group %q: %w", group, err)
	}
	return out, nil
}
