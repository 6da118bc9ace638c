package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// CreateSchedules inserts the runtime schedules defs into group in one
// transaction, all or nothing.
//
// A bulk creation names free names, and one statement writes it
// (insertTx): the rows from one array per column (a batch of thousands
// costs one short statement), an audit entry and revision 1 per row, and
// the group's wake-up. It neither reads the names first nor arbitrates
// each row's conflict (ON CONFLICT costs an index probe and a WAL record
// per row): the unique index refuses a name any row holds, which rolls
// that transaction back, and the batch is then written again the careful
// way (createTx), which refuses a taken name or revives a tombstone. Both
// take the group's registration lock (UpsertTasks, RemoveTask) in shared
// mode: creations run side by side, but never between a registration's
// read of the group and its writes, so a registration either sees a
// schedule and refuses its name or came first and took it.
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
		out, err = s.insertTx(ctx, tx, group, defs, c)
		return err
	})
	if isNameConflict(err) {
		err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var err error
			out, err = s.createTx(ctx, tx, group, defs, c)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: create %d schedules in group %q: %w", len(defs), group, err)
	}
	return out, nil
}

// uniqueViolation is PostgreSQL's SQLSTATE for a unique index refusing a
// row.
const uniqueViolation = "23505"

// isNameConflict reports whether err is the unique index of the tasks
// refusing a row: a name held by a row insertTx did not read.
func isNameConflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == uniqueViolation && pgErr.TableName == "easyjob_tasks"
}

// createColumns are the rows of a CreateSchedules, column by column.
// Options are sent once per distinct set (options; opt indexes it from 1)
// and decoded once by the server: a batch shares a few.
type createColumns struct {
	name, handler, cron, args, status []string
	opt                               []int32
	options                           []string
	decoded                           []repository.TaskOptions // options as a read decodes them
	paused                            []bool
	next                              []pgtype.Timestamptz // not Valid: the store's now
	revive                            []int64              // the tombstone's id, 0 for a new row (createTx)
}

// scheduleColumns checks defs (distinct names, JSON arguments) and lays
// them out for unnest.
func scheduleColumns(group string, defs []repository.ScheduleDef) (createColumns, error) {
	n := len(defs)
	c := createColumns{
		name: make([]string, n), handler: make([]string, n), cron: make([]string, n),
		args: make([]string, n), status: make([]string, n), opt: make([]int32, n),
		paused: make([]bool, n), next: make([]pgtype.Timestamptz, n),
	}
	if err := repository.CheckScheduleDefs(group, defs); err != nil {
		return c, err
	}
	at := map[repository.TaskOptions]int32{}
	for i, d := range defs {
		k, ok := at[d.Options]
		if !ok {
			opts, err := encodeOptions(d.Options)
			if err != nil {
				return c, err
			}
			var o repository.TaskOptions
			if err := json.Unmarshal([]byte(opts), &o); err != nil {
				return c, fmt.Errorf("easyjob/postgres: decode options: %w", err)
			}
			c.options, c.decoded = append(c.options, opts), append(c.decoded, o)
			k = int32(len(c.options))
			at[d.Options] = k
		}
		c.name[i], c.handler[i], c.cron[i], c.args[i] = d.Name, d.Handler, d.Cron, d.Args
		c.status[i], c.opt[i], c.paused[i] = string(createdStatus(d)), k, d.Paused
		c.next[i] = pgtype.Timestamptz{Time: d.NextStartTime, Valid: !d.NextStartTime.IsZero()}
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

// rowArgs are the arguments of createRowsSQL for c, revive column
// included or not.
func (c createColumns) rowArgs(revive bool) []any {
	args := []any{c.name, c.handler, c.cron, c.args, c.opt, c.status, c.paused, c.next}
	if revive {
		args = append(args, c.revive)
	}
	return append(args, c.options)
}

// createArgs are the arguments of a creation statement after the rows':
// the group, the wake-up's payload, the audit entry when ctx carries one
// (audit reports it), and the revisions' actor.
func createArgs(ctx context.Context, group string) (args []any, audit int) {
	args = []any{group, group}
	if e, ok := repository.AuditFrom(ctx); ok {
		audit = 1
		args = append(args, auditArgs(e)...)
	}
	return append(args, revisionActor(ctx)...), audit
}

// insertTx writes a batch of free names (see CreateSchedules) and builds
// the rows it returns from defs: the statement sends back only what the
// server decided (ids, times, the arguments as jsonb spells them), not
// every column of every row, which cost the server an output conversion
// and the client a scan of some 27 columns per row. The other columns of
// a new row are its definition's or their defaults; a column added with
// another default must be set here too (the conformance suite compares
// the rows returned with the rows read back).
func (s *Store) insertTx(ctx context.Context, tx bun.Tx, group string, defs []repository.ScheduleDef, c createColumns) ([]repository.Task, error) {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared(?::int, hashtext(?))`, upsertLockClass, group); err != nil {
		return nil, err
	}
	more, audit := createArgs(ctx, group)
	args := append(c.rowArgs(false), more...)
	rows, err := tx.Tx.QueryContext(ctx, insertQueries[audit], binaryArgs(s.binary, args)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type written struct {
		id            int64
		next, created time.Time
		args          string
	}
	ws := make([]written, 0, len(defs))
	var (
		id            pgtype.Int8
		next, created pgtype.Timestamptz
		jargs         pgtype.Text
	)
	for rows.Next() {
		if err := rows.Scan(&id, &next, &created, &jargs); err != nil {
			return nil, err
		}
		ws = append(ws, written{id.Int64, utcTz(next), utcTz(created), jargs.String})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ws) != len(defs) {
		return nil, fmt.Errorf("wrote %d rows for %d schedules", len(ws), len(defs))
	}
	// Each id is drawn (nextval) as the insert receives its row, after the
	// ORDER BY that puts the rows in the order of defs.
	slices.SortFunc(ws, func(a, b written) int { return cmp.Compare(a.id, b.id) })
	out := make([]repository.Task, len(defs))
	for i, d := range defs {
		w := ws[i]
		out[i] = repository.Task{
			ID: repository.TaskID(w.id), Group: group, Name: d.Name, Handler: d.Handler, Dynamic: true,
			Cron: d.Cron, CodeCron: d.Cron, Args: w.args, Options: c.decoded[c.opt[i]-1],
			Status: createdStatus(d), Paused: d.Paused, NextStartTime: w.next,
			Version: 1, Revision: 1, Attempt: 1, CreatedAt: w.created, UpdatedAt: w.created,
		}
	}
	return out, nil
}

// createTx writes a batch insertTx could not: the names are read and
// locked first. One held by a row that is not removed fails the call
// with ErrTaskExists naming it, before anything is written; a removed row
// (a tombstone kept for its history) is revived under its id, the
// definitions of its former life deleted first. One statement then
// revives the tombstones and inserts the new rows. A name a concurrent
// creation took meanwhile is skipped by the insert (ON CONFLICT DO
// NOTHING) and fails the call as taken.
func (s *Store) createTx(ctx context.Context, tx bun.Tx, group string, defs []repository.ScheduleDef, c createColumns) ([]repository.Task, error) {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared(?::int, hashtext(?))`, upsertLockClass, group); err != nil {
		return nil, err
	}
	taken, err := lockNames(ctx, tx, group, c.name)
	if err != nil {
		return nil, err
	}
	revive := 0
	c.revive = make([]int64, len(defs))
	for i, name := range c.name {
		if t, ok := taken[name]; ok {
			if t.status != string(repository.TaskRemoved) {
				return nil, nameTaken(group, name)
			}
			c.revive[i], revive = t.id, 1
		}
	}
	more, audit := createArgs(ctx, group)
	args := append(c.rowArgs(true), more...)
	if revive == 1 {
		// A revived tombstone is a new task under the old id: the
		// definitions of its former life go (its revision restarts at 1).
		if _, err := tx.ExecContext(ctx, `DELETE FROM easyjob_task_revisions WHERE task_id = ANY(?::bigint[])`,
			pgdialect.Array(c.revive)); err != nil {
			return nil, err
		}
	}
	rows, err := scanTasks(tx.Tx.QueryContext(ctx, createQueries[revive][audit], binaryArgs(s.binary, args)...))
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

// createRowsSQL is the rows of a creation (v): one array per column (the
// revive column with %[1]s to %[3]s), in the order given (ord), each row
// with its options decoded once per distinct set and its first fire, the
// store's now when none was given.
const createRowsSQL = `SELECT v.name, v.handler, v.cron, nullif(v.args, '')::jsonb AS args, v.status, v.paused,
    coalesce(v.next, now()) AS next, o.options%[3]s, v.ord
  FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::int[], ?::text[], ?::bool[], ?::timestamptz[]%[1]s)
    WITH ORDINALITY AS v(name, handler, cron, args, opt, status, paused, next%[2]s, ord)
  JOIN unnest(?::jsonb[]) WITH ORDINALITY AS o(options, opt) ON o.opt = v.opt`

// createRows returns createRowsSQL with the revive column or without.
func createRows(revive bool) string {
	if revive {
		return fmt.Sprintf(createRowsSQL, ", ?::bigint[]", ", revive", ", v.revive")
	}
	return fmt.Sprintf(createRowsSQL, "", "", "")
}

// insertSQL is insertTx's statement: it inserts the rows (i) in the order
// given, wakes the group (n, run by the count in the final WHERE), records
// the audit entries (%[1]s, when there is an entry) and revision 1 of
// every row (rv). It sets due_at itself, which spares each row the call
// of the insert trigger (migration 0015), and returns only what defs do
// not say.
var insertSQL = `WITH v AS (` + createRows(false) + `),
i AS (
  INSERT INTO easyjob_tasks AS t
    (group_name, name, handler, cron, code_cron, args, options, status, paused, next_start_time, due_at,
     dynamic, revision, created_at, updated_at)
  SELECT ?::text, v.name, v.handler, v.cron, v.cron, v.args, v.options, v.status, v.paused, v.next, v.next,
    true, 1, now(), now()
  FROM v
  ORDER BY v.ord
  RETURNING t.id, t.group_name, t.name, t.handler, t.cron, t.args, t.options, t.revision, t.next_start_time, t.created_at
),
n AS (SELECT pg_notify('` + notifyChannel + `', ?::text))%[1]s,
rv AS (` + newRevisionsSQL("i", "i.args") + `)
SELECT i.id, i.next_start_time, i.created_at, i.args::text FROM i WHERE (SELECT count(*) FROM n) >= 0`

// createSQL is createTx's statement: it inserts the new rows (i) in the
// order given, skipping a name taken meanwhile, and wakes the group (n).
// %[2]s revives the tombstones first (r, when the batch has any) and
// %[3]s names the rows written (w); %[4]s is the audit CTE, if any; rv
// records revision 1 of every row written. A revived row keeps its id,
// created_at and last result, and takes everything else from its
// definition, version+1, as a registration revives one.
var createSQL = `WITH v AS (` + createRows(true) + `),%[2]s
i AS (
  INSERT INTO easyjob_tasks AS t
    (group_name, name, handler, cron, code_cron, args, options, status, paused, next_start_time, due_at,
     dynamic, revision, created_at, updated_at)
  SELECT ?::text, v.name, v.handler, v.cron, v.cron, v.args, v.options, v.status, v.paused, v.next, v.next,
    true, 1, now(), now()
  FROM v WHERE v.revive = 0
  ORDER BY v.ord
  ON CONFLICT (group_name, name) DO NOTHING
  RETURNING %[1]s
),
w AS (%[3]s),
n AS (SELECT pg_notify('` + notifyChannel + `', ?::text))%[4]s,
rv AS (` + newRevisionsSQL("w", "w.args_json") + `)
SELECT ` + taskCols("w") + ` FROM w WHERE (SELECT count(*) FROM n) >= 0`

// createRevive is the CTE of createSQL that revives the tombstones of a
// batch: one join of the batch with the rows by id.
const createRevive = `
r AS (
  UPDATE easyjob_tasks t SET
    handler = v.handler, cron = v.cron, code_cron = v.cron, overridden_at = NULL,
    args = v.args, fire_args = NULL, options = v.options,
    status = v.status, paused = v.paused, next_start_time = v.next,
    parent_id = NULL, node_id = NULL, attempt = 1, trigger_requested = false, fire_kind = '',
    stale_since = NULL, dynamic = true, revision = 1, version = t.version + 1, updated_at = now()
  FROM v
  WHERE v.revive <> 0 AND t.id = v.revive AND t.status = 'removed'
  RETURNING %[1]s
),`

// createAudit records one entry per row of the CTE %[1]s: the context's
// entry, action "create" and a detail naming the handler and cron unless
// it gives its own.
const createAudit = `,
a AS (
  INSERT INTO easyjob_audit (group_name, task, actor, via, origin, action, detail)
  SELECT %[1]s.group_name, %[1]s.name, ?::text, ?::text, ?::text, coalesce(nullif(?::text, ''), 'create'),
    coalesce(nullif(?::text, ''), 'handler ' || %[1]s.handler || ' cron ' || %[1]s.cron)
  FROM %[1]s
)`

// insertQueries are insertSQL as sent, by [audit].
var insertQueries = func() (q [2]string) {
	q[0] = dollarPlaceholders(fmt.Sprintf(insertSQL, ""))
	q[1] = dollarPlaceholders(fmt.Sprintf(insertSQL, fmt.Sprintf(createAudit, "i")))
	return q
}()

// createQueries are createSQL as sent, by [revive][audit]: a batch without
// tombstones neither joins nor gathers two CTEs' rows.
var createQueries = func() (q [2][2]string) {
	// The written rows carry their arguments as jsonb too, for the
	// revisions: taskCols gives them as text.
	cols := taskCols("t") + ", t.args AS args_json"
	for revive := range 2 {
		for audit := range 2 {
			r, w, a := "", "SELECT * FROM i", ""
			if revive == 1 {
				r, w = fmt.Sprintf(createRevive, cols), "SELECT * FROM r UNION ALL SELECT * FROM i"
			}
			if audit == 1 {
				a = fmt.Sprintf(createAudit, "w")
			}
			q[revive][audit] = dollarPlaceholders(fmt.Sprintf(createSQL, cols, r, w, a))
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
