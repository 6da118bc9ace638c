package postgres

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/easyjob-go/easyjob/repository"
)

// taskColumnNames is the order in which scanTask reads a task row. Every
// statement that returns tasks selects cols(alias) so one scanner serves
// them all, including left joins where the whole row may be NULL. The
// jsonb arguments are read as text (a cast keeps the column's name), so
// that they scan alike through either protocol.
var taskColumnNames = []string{
	"id", "group_name", "name", "cron", "parent_id", "status", "version",
	"node_id", "next_start_time", "attempt", "paused", "trigger_requested",
	"options", "last_status", "last_error", "last_finished_at",
	"created_at", "updated_at", "code_cron", "overridden_at", "stale_since",
	"fire_kind", "handler", "dynamic", "args::text", "fire_args::text", "revision", "failures",
	"backfill_next", "backfill_to", "backfill_at", "fires",
}

// taskCols returns the task columns qualified by alias, e.g. "t.id, t.name".
func taskCols(alias string) string {
	return qualify(alias, taskColumnNames)
}

func qualify(alias string, names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(alias)
		b.WriteByte('.')
		b.WriteString(n)
	}
	return b.String()
}

// taskScan receives one task row. Every field is nullable so that a left
// join that found no row (a fenced Finish, an empty DueTasks) scans too.
// The fields are pgx's own types: they scan through database/sql too
// (sql.Scanner), and pgx reads them without converting each column to a
// driver value first (queryEach).
type taskScan struct {
	id, parentID, version, nodeID, attempt pgtype.Int8
	group, name, cron, status, codeCron    pgtype.Text
	lastStatus, lastError, fireKind        pgtype.Text
	handler, args, fireArgs                pgtype.Text
	next, lastFinished, created, updated   pgtype.Timestamptz
	overridden, stale                      pgtype.Timestamptz
	paused, trigger, dynamic               pgtype.Bool
	revision, failures, fires              pgtype.Int8
	backfillNext, backfillTo, backfillAt   pgtype.Timestamptz
	options                                []byte
}

func (r *taskScan) dest() []any {
	return []any{
		&r.id, &r.group, &r.name, &r.cron, &r.parentID, &r.status, &r.version,
		&r.nodeID, &r.next, &r.attempt, &r.paused, &r.trigger,
		&r.options, &r.lastStatus, &r.lastError, &r.lastFinished,
		&r.created, &r.updated, &r.codeCron, &r.overridden, &r.stale,
		&r.fireKind, &r.handler, &r.dynamic, &r.args, &r.fireArgs, &r.revision, &r.failures,
		&r.backfillNext, &r.backfillTo, &r.backfillAt, &r.fires,
	}
}

// task converts the scanned row; ok is false when the row was NULL.
func (r *taskScan) task() (t repository.Task, ok bool, err error) {
	if !r.id.Valid {
		return t, false, nil
	}
	t = repository.Task{
		ID:               repository.TaskID(r.id.Int64),
		Group:            r.group.String,
		Name:             r.name.String,
		Cron:             r.cron.String,
		ParentID:         repository.TaskID(r.parentID.Int64),
		Status:           repository.TaskStatus(r.status.String),
		Version:          r.version.Int64,
		NodeID:           repository.NodeID(r.nodeID.Int64),
		NextStartTime:    utcTz(r.next),
		Attempt:          int(r.attempt.Int64),
		Paused:           r.paused.Bool,
		TriggerRequested: r.trigger.Bool,
		LastStatus:       repository.ExecStatus(r.lastStatus.String),
		LastError:        r.lastError.String,
		LastFinishedAt:   utcTz(r.lastFinished),
		CreatedAt:        utcTz(r.created),
		UpdatedAt:        utcTz(r.updated),
		CodeCron:         r.codeCron.String,
		OverriddenAt:     utcTz(r.overridden),
		StaleSince:       utcTz(r.stale),
		FireKind:         repository.RunKind(r.fireKind.String),
		Handler:          r.handler.String,
		Dynamic:          r.dynamic.Bool,
		Args:             r.args.String,
		FireArgs:         r.fireArgs.String,
		Revision:         r.revision.Int64,
		Failures:         int(r.failures.Int64),
		BackfillNext:     utcTz(r.backfillNext),
		BackfillTo:       utcTz(r.backfillTo),
		BackfillAt:       utcTz(r.backfillAt),
		Fires:            r.fires.Int64,
	}
	if len(r.options) > 0 {
		if err := json.Unmarshal(r.options, &t.Options); err != nil {
			return t, false, fmt.Errorf("easyjob/postgres: task %d options: %w", t.ID, err)
		}
	}
	return t, true, nil
}

// taskWith is task with the options decoded through m: on the hot path
// (Finish) every row carries one of a few option sets, and decoding JSON
// per row cost as much as the rest of the row.
func (r *taskScan) taskWith(m *optionsMemo) (repository.Task, bool, error) {
	opts := r.options
	r.options = nil
	t, ok, err := r.task()
	if !ok || err != nil || len(opts) == 0 {
		return t, ok, err
	}
	t.Options, err = m.decode(opts)
	if err != nil {
		return t, false, fmt.Errorf("easyjob/postgres: task %d options: %w", t.ID, err)
	}
	return t, true, nil
}

// optionsMemo keeps decoded TaskOptions (a plain value) by their JSON.
type optionsMemo struct {
	mu   sync.Mutex
	seen map[string]repository.TaskOptions
}

// maxOptionSets bounds the memo: beyond it, options are decoded each time.
const maxOptionSets = 1024

func (m *optionsMemo) decode(b []byte) (repository.TaskOptions, error) {
	m.mu.Lock()
	o, ok := m.seen[string(b)]
	m.mu.Unlock()
	if ok {
		return o, nil
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return repository.TaskOptions{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]repository.TaskOptions{}
	}
	if len(m.seen) < maxOptionSets {
		m.seen[string(b)] = o
	}
	return o, nil
}

// scanTasks reads every row of rows as a task and closes rows. One scan
// buffer serves every row, and options are decoded once per distinct
// JSON: the rows of one statement (a registration, a loader's pass) share
// a few option sets, and a decode per row was most of the client's time.
func scanTasks(rows *sql.Rows, err error) ([]repository.Task, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []repository.Task
	var r taskScan
	dest := r.dest()
	var memo optionsMemo
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		t, ok, err := r.taskWith(&memo)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, t)
		}
	}
	return out, rows.Err()
}

// encodeOptions renders options for a ?::jsonb placeholder. A string (not
// []byte) is passed because bun renders []byte as bytea.
func encodeOptions(o repository.TaskOptions) (string, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return "", fmt.Errorf("easyjob/postgres: encode options: %w", err)
	}
	return string(b), nil
}

var nodeColumnNames = []string{"id", "group_name", "name", "weight", "counts", "started_at", "heartbeat_at", "leaving", "task_set"}

func nodeCols(alias string) string { return qualify(alias, nodeColumnNames) }

func scanNodes(rows *sql.Rows, err error) ([]repository.Node, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []repository.Node
	for rows.Next() {
		var n repository.Node
		if err := rows.Scan(&n.ID, &n.Group, &n.Name, &n.Weight, &n.Counts, &n.StartedAt, &n.HeartbeatAt, &n.Leaving, &n.TaskSet); err != nil {
			return nil, err
		}
		n.StartedAt, n.HeartbeatAt = n.StartedAt.UTC(), n.HeartbeatAt.UTC()
		out = append(out, n)
	}
	return out, rows.Err()
}

var execColumnNames = []string{
	"id", "task_id", "parent_execution_id", "node_id", "scheduled_at",
	"started_at", "finished_at", "status", "error", "attempt", "misfire", "kind",
	"args::text", "revision", "batch",
}

func execCols(alias string) string { return qualify(alias, execColumnNames) }

// execScan receives one execution row; nullable for the same reason as
// taskScan (History left-joins executions to their task).
type execScan struct {
	id, taskID, parentID, nodeID, attempt sql.NullInt64
	revision, batch                       sql.NullInt64
	scheduled, started, finished          sql.NullTime
	status, errText, misfire, kind, args  sql.NullString
}

func (r *execScan) dest() []any {
	return []any{
		&r.id, &r.taskID, &r.parentID, &r.nodeID, &r.scheduled,
		&r.started, &r.finished, &r.status, &r.errText, &r.attempt, &r.misfire, &r.kind,
		&r.args, &r.revision, &r.batch,
	}
}

func (r *execScan) execution() (e repository.Execution, ok bool) {
	if !r.id.Valid {
		return e, false
	}
	return repository.Execution{
		ID:                r.id.Int64,
		TaskID:            repository.TaskID(r.taskID.Int64),
		ParentExecutionID: r.parentID.Int64,
		NodeID:            repository.NodeID(r.nodeID.Int64),
		ScheduledAt:       utc(r.scheduled),
		StartedAt:         utc(r.started),
		FinishedAt:        utc(r.finished),
		Status:            repository.ExecStatus(r.status.String),
		Error:             r.errText.String,
		Attempt:           int(r.attempt.Int64),
		Misfire:           repository.MisfireAction(r.misfire.String),
		Kind:              repository.RunKind(r.kind.String),
		Args:              r.args.String,
		Revision:          r.revision.Int64,
		Batch:             r.batch.Int64,
	}, true
}

// utcTz is utc for pgx's timestamptz.
func utcTz(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

func utc(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// nullTime maps the zero time to SQL NULL, which the statements read as
// "not given" (coalesce with the row's value).
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// micros renders a duration for "?::bigint * interval '1 microsecond'":
// Postgres intervals have microsecond resolution.
func micros(d time.Duration) int64 { return d.Microseconds() }

// cleanText drops NUL bytes, which Postgres text cannot hold; an error
// message from user code must never make a finish fail.
func cleanText(s string) string {
	return strings.ReplaceAll(s, "\x00", "")
}

// notFound names the task in an error wrapping ErrTaskNotFound.
func notFound(group, name string) error {
	return fmt.Errorf("easyjob/postgres: task %q in group %q: %w", name, group, repository.ErrTaskNotFound)
}
