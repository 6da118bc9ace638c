package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// finishSQL applies a batch of finishes in one statement:
//
//   - v holds the batch, ord keeping each finish's position; it is sent as
//     one array per column (unnest), so the statement's text and plan do
//     not grow with the batch: parsing N VALUES rows of casts cost more
//     than executing them;
//   - l locks every task row of the batch in id order (as lockFenced does)
//     and says per row whether its fence holds (held), carrying v along;
//   - each statement reads one CTE and reaches table rows by primary key
//     only (the id arrays, fenceHolds): a join between two CTEs, each
//     estimated at one row, was planned as a nested loop that scanned one
//     for every row of the other, and fence tests as index conditions
//     read every held task of the node per row;
//   - u updates the held rows (locked: nothing can change them meanwhile)
//     and returns each one's ord, so a finish is known to have applied by
//     its position, not by task id;
//   - x closes each recorded execution, as 'fenced' when its fence failed;
//     w deletes the start record of a fire given back before its job
//     began (Finish.Withdraw): it was no run. A fenced one deletes it
//     only while recovery's 'abandoned' mark is on it: a 'running' row
//     is a run the same node made of that fire since, reopening it;
//   - a appends the execution of a run that had no start record (a short
//     run is written once, here: history is append-only on the hot path),
//     'fenced' likewise, unless a row exists at its start key: a retry
//     whose first reply was lost leaves its own row, and r gives a row
//     recovery wrote as abandoned (a zombie's fire) the zombie's outcome,
//     as x does. A plain insert, not ON CONFLICT: speculative insertion
//     writes a second WAL record per row. Should a row at the same key
//     commit between this statement's snapshot and its insert (recovery
//     racing a zombie's finish), the unique index fails the statement and
//     the completer's retry finds the row;
//   - n wakes the group's listeners when a handed-off row ended pending
//     (the count in the final WHERE makes the CTE run);
//   - the final select returns the written rows with their ord; a finish
//     missing from it lost its fence.
//
// The CASE ladders follow the priority of docs/store-semantics.md: done,
// then a trigger requested meanwhile, then a cron rescheduled or a
// definition edited meanwhile (the row's cron or revision differs from the
// finish's: the row's next fire stands, the first of the new cron's after
// the one that ran, retimeSQL), then a pause requested meanwhile, then keep, then the plain
// reschedule. Only the keep branch leaves the task claimed. The arguments
// of a manual fire (fire_args) outlive the finish only when it schedules
// the extra fire a trigger asked for while it ran.
// measuredStart and measuredEnd are a run's start and end as measured
// where its job ran (Finish.Started, Finish.Ran), never after the
// store's now; with no measured start the end is now. "Now" is the
// statement's time, not the transaction's (now()): a finish may run in a
// job's transaction begun before the job (TxFinisher), and its run ends
// when the job did. For a statement of its own the two are the same.
const (
	measuredStart = `least(timestamptz 'epoch' + l.started_us * interval '1 microsecond', statement_timestamp())`
	measuredEnd   = `CASE WHEN l.started_us <> 0
      THEN least(timestamptz 'epoch' + (l.started_us + l.ran_us) * interval '1 microsecond', statement_timestamp())
      ELSE statement_timestamp() END`
)

const finishSQL = `WITH v AS (
  SELECT * FROM unnest(?::int[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::text[],
    ?::timestamptz[], ?::int[], ?::text[], ?::bool[], ?::bool[], ?::bool[],
    ?::bool[], ?::timestamptz[], ?::int[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[],
    ?::bigint[], ?::text[], ?::bigint[], ?::bool[], ?::text[], ?::bool[], ?::timestamptz[], ?::bool[], ?::bigint[], ?::text[], ?::bool[], ?::text[])
    AS v(ord, id, version, node_id, exec_id, status, err, next, attempt, cron, done, keep, handoff,
      run, scheduled, run_attempt, misfire, parent, ran_us, started_us, run_kind,
      revision, run_args, run_revision, pause, next_kind, backfilled, backfill_next, count_fire, run_batch, run_log, withdraw, result)
),
l AS (
  SELECT v.*, ` + fenceHolds + ` AS held, c.paused AS was_paused
  FROM easyjob_tasks c JOIN v ON c.id = v.id
  WHERE c.id = ANY(?::bigint[])
  ORDER BY c.id
  FOR NO KEY UPDATE OF c
),
u AS (
  UPDATE easyjob_tasks t SET
    version = t.version + 1,
    last_status = CASE WHEN l.status = '' THEN t.last_status ELSE l.status END,
    failures = CASE WHEN l.status IN ('failed', 'timed_out') THEN t.failures + 1
      WHEN l.status = 'succeeded' THEN 0 ELSE t.failures END,
    last_error = CASE WHEN l.status = '' THEN t.last_error ELSE l.err END,
    last_finished_at = CASE WHEN l.status = '' THEN t.last_finished_at ELSE statement_timestamp() END,
    updated_at = statement_timestamp(),
    status = CASE
      WHEN l.done THEN 'finished'
      WHEN t.trigger_requested THEN 'pending'
      WHEN t.cron <> l.cron OR t.revision <> l.revision THEN CASE WHEN t.paused OR ` + pausing + ` THEN 'paused' ELSE 'pending' END
      WHEN t.paused OR ` + pausing + ` THEN 'paused'
      WHEN l.keep AND NOT ` + backfillAsked + ` THEN 'doing'
      ELSE 'pending' END,
    paused = t.paused OR (NOT l.done AND NOT t.trigger_requested AND ` + pausing + `),
    node_id = CASE
      WHEN NOT l.done AND NOT t.trigger_requested AND t.cron = l.cron AND t.revision = l.revision AND NOT t.paused AND l.keep
        AND NOT ` + pausing + ` AND NOT ` + backfillAsked + `
      THEN t.node_id END,
    next_start_time = CASE
      WHEN l.done THEN t.next_start_time
      WHEN t.trigger_requested THEN statement_timestamp()
      WHEN t.cron <> l.cron OR t.revision <> l.revision THEN t.next_start_time
      ELSE coalesce(l.next, t.next_start_time) END,
    held_fire = NULL,
    attempt = CASE
      WHEN l.done THEN t.attempt
      WHEN t.trigger_requested OR t.cron <> l.cron OR t.revision <> l.revision THEN 1
      ELSE l.attempt END,
    trigger_requested = CASE WHEN l.done THEN t.trigger_requested ELSE false END,
    fire_kind = CASE
      WHEN l.done THEN t.fire_kind
      WHEN t.trigger_requested THEN 'manual'
      WHEN t.cron <> l.cron OR t.revision <> l.revision OR t.paused OR ` + pausing + ` THEN ''
      ELSE l.next_kind END,
    fire_args = CASE WHEN NOT l.done AND t.trigger_requested THEN t.fire_args END,
    backfill_next = CASE WHEN l.done THEN NULL WHEN l.backfilled THEN l.backfill_next ELSE t.backfill_next END,
    backfill_to = CASE WHEN l.done OR (l.backfilled AND l.backfill_next IS NULL) THEN NULL ELSE t.backfill_to END,
    backfill_at = CASE WHEN l.done OR (l.backfilled AND l.backfill_next IS NULL) THEN NULL ELSE t.backfill_at END,
    fires = t.fires + CASE WHEN l.count_fire THEN 1 ELSE 0 END
  FROM l
  WHERE t.id = l.id AND l.held
  RETURNING l.ord, l.handoff, l.was_paused, l.node_id AS claimer, %s
),
pa AS (
  INSERT INTO easyjob_audit (group_name, task, actor, via, action, detail)
  SELECT u.group_name, u.name, 'node ' || u.claimer, 'node', 'pause',
    format('after %%s failed runs in a row (the last: %%s)', u.failures, u.last_error)
  FROM u WHERE u.paused AND NOT u.was_paused
),
x AS (
  UPDATE easyjob_executions e SET
    status = CASE WHEN l.held THEN l.status ELSE 'fenced' END,
    started_at = CASE WHEN l.started_us <> 0 THEN ` + measuredStart + ` ELSE e.started_at END,
    finished_at = ` + measuredEnd + `,
    error = l.err,
    log = CASE WHEN l.run_log = '' THEN e.log ELSE l.run_log END,
    result = coalesce(nullif(l.result, ''), e.result)
  FROM l
  WHERE e.id = ANY(?::bigint[]) AND e.id = l.exec_id AND l.exec_id <> 0 AND l.status <> '' AND NOT l.withdraw
    AND e.status IN ('running', 'abandoned')
  RETURNING e.id
),
w AS (
  DELETE FROM easyjob_executions e USING l
  WHERE e.id = ANY(?::bigint[]) AND e.id = l.exec_id AND l.withdraw
    AND CASE WHEN l.held THEN e.status IN ('running', 'abandoned') ELSE e.status = 'abandoned' END
  RETURNING e.id
),
a AS (
  INSERT INTO easyjob_executions
    (task_id, parent_execution_id, node_id, scheduled_at, attempt, misfire, kind, args, revision, batch,
     status, error, started_at, finished_at, log, result)
  SELECT l.id, nullif(l.parent, 0), l.node_id, l.scheduled, greatest(l.run_attempt, 1), l.misfire, l.run_kind,
    nullif(l.run_args, '')::jsonb, l.run_revision, l.run_batch,
    CASE WHEN l.status = '' THEN 'running' WHEN l.held THEN l.status ELSE 'fenced' END, l.err,
    CASE WHEN l.started_us <> 0 THEN ` + measuredStart + ` ELSE statement_timestamp() - l.ran_us * interval '1 microsecond' END,
    CASE WHEN l.status = '' THEN NULL ELSE ` + measuredEnd + ` END, l.run_log, nullif(l.result, '')
  FROM l
  WHERE l.run AND l.exec_id = 0 AND NOT l.withdraw AND (l.held OR l.status <> '') AND CASE WHEN l.held THEN NOT EXISTS (
      SELECT 1 FROM easyjob_executions o
      WHERE o.task_id = l.id AND o.node_id = l.node_id AND o.scheduled_at = l.scheduled AND o.attempt = greatest(l.run_attempt, 1)
        AND o.batch = l.run_batch AND o.status <> 'fenced')
    ELSE NOT EXISTS (
      SELECT 1 FROM easyjob_executions o
      WHERE o.task_id = l.id AND o.node_id = l.node_id AND o.scheduled_at = l.scheduled AND o.attempt = greatest(l.run_attempt, 1)
        AND o.batch = l.run_batch AND (o.status IN ('running', 'abandoned', 'fenced') OR l.started_us = 0 OR o.started_at = ` + measuredStart + `))
    END
  RETURNING id
),
r AS (
  UPDATE easyjob_executions o SET
    status = CASE WHEN l.held THEN l.status ELSE 'fenced' END,
    started_at = CASE WHEN l.started_us <> 0 THEN ` + measuredStart + ` ELSE o.started_at END,
    finished_at = ` + measuredEnd + `,
    error = l.err,
    log = CASE WHEN l.run_log = '' THEN o.log ELSE l.run_log END,
    result = coalesce(nullif(l.result, ''), o.result),
    args = coalesce(o.args, nullif(l.run_args, '')::jsonb),
    revision = CASE WHEN o.revision = 0 THEN l.run_revision ELSE o.revision END
  FROM l
  WHERE l.run AND l.exec_id = 0 AND l.status <> '' AND NOT l.withdraw
    AND o.task_id = l.id AND o.node_id = l.node_id AND o.scheduled_at = l.scheduled AND o.attempt = greatest(l.run_attempt, 1)
    AND o.batch = l.run_batch AND o.status IN ('running', 'abandoned')
  RETURNING o.id
),
n AS (
  SELECT pg_notify('` + notifyChannel + `', g.group_name) FROM (
    SELECT DISTINCT u.group_name FROM u WHERE u.handoff AND u.status = 'pending'
  ) g
)
SELECT u.ord, %s FROM u WHERE (SELECT count(*) FROM n) >= 0`

// The append (a) of a run without a start record skips a row of its
// start key that is the run's own (the held case written apart, so that
// its probe is the partial unique index easyjob_executions_live_start_key
// rather than a walk through the task's history): for a held finish any row not fenced
// (a retried finish whose first reply was lost); for a fenced one an open
// row (r closes it), a fenced row, or a closed one that started when this
// run did (the retry again). A row this node closed under a later claim
// of the same fire, which started at another time, is another run: the
// fenced one is recorded beside it, so the history keeps every run.

// backfillAsked is true in the finish of a fire other than a backfill's
// when the row has a backfill fire pending (asked for while it ran, or
// left behind a manual fire): the claim is not kept, the row goes
// pending and is due at once for its backfill (due_at, migration 0018).
const backfillAsked = `(t.backfill_next IS NOT NULL AND NOT l.backfilled)`

// pausing is true in the finish of a run that makes the task's failed
// runs in a row reach its PauseAfter option (Finish.Pause): the finish
// parks the task paused (unless it is done or a trigger asked for an
// extra fire) and records the pause in the audit log (pa), in the same
// statement, so no fire starts between the last allowed failure and the
// pause. The node decides, from the row it holds: reading the option from
// the row's JSON here cost every finish, failed or not, a third more.
const pausing = `l.pause`

// finishQuery is finishSQL as sent (queryEach).
var finishQuery = dollarPlaceholders(fmt.Sprintf(finishSQL, taskCols("t"), taskCols("u")))

// Finish applies many finishes in one statement, each with its own fence;
// results are in the order of fs.
func (s *Store) Finish(ctx context.Context, fs []repository.Finish) ([]repository.FinishResult, error) {
	return s.finish(ctx, fs, s.queryEach)
}

// eachRow runs q and calls each after scanning every row into dest: the
// pool's (queryEach) or a transaction's (txFinish).
type eachRow func(ctx context.Context, q string, args, dest []any, each func() error) error

// finish is Finish through query.
func (s *Store) finish(ctx context.Context, fs []repository.Finish, query eachRow) ([]repository.FinishResult, error) {
	if len(fs) == 0 {
		return nil, nil
	}
	c := newFinishColumns(len(fs))
	for i, f := range fs {
		c.ord = append(c.ord, int32(i))
		c.id = append(c.id, int64(f.Claim.ID))
		c.version = append(c.version, f.Claim.Version)
		c.node = append(c.node, int64(f.Claim.NodeID))
		c.exec = append(c.exec, f.ExecutionID)
		c.status = append(c.status, string(f.Status))
		c.err = append(c.err, cleanText(f.Error))
		c.next = append(c.next, nullTimePtr(f.Next))
		c.attempt = append(c.attempt, int32(max(f.NextAttempt, 1)))
		c.cron = append(c.cron, f.Cron)
		c.done = append(c.done, f.Done)
		c.keep = append(c.keep, f.Keep)
		c.handoff = append(c.handoff, f.Handoff)
		c.pause = append(c.pause, f.Pause)
		c.nextKind = append(c.nextKind, string(f.NextKind))
		c.backfilled = append(c.backfilled, f.Backfilled)
		c.backfillNext = append(c.backfillNext, nullTimePtr(f.BackfillNext))
		c.countFire = append(c.countFire, f.CountFire)
		c.withdraw = append(c.withdraw, f.Withdraw)
		c.result = append(c.result, cleanText(f.Result))
		run := f.ExecutionID == 0 && f.Run != nil
		r := repository.Execution{ScheduledAt: time.Unix(0, 0)}
		if run {
			r = *f.Run
		}
		c.run = append(c.run, run)
		c.scheduled = append(c.scheduled, r.ScheduledAt)
		c.runAttempt = append(c.runAttempt, int32(r.Attempt))
		c.misfire = append(c.misfire, string(r.Misfire))
		c.kind = append(c.kind, string(r.Kind))
		c.revision = append(c.revision, f.Revision)
		c.runArgs = append(c.runArgs, repository.RecordedArgs(r.Args))
		c.runRevision = append(c.runRevision, r.Revision)
		c.runBatch = append(c.runBatch, r.Batch)
		c.runLog = append(c.runLog, cleanText(f.Log))
		c.parent = append(c.parent, r.ParentExecutionID)
		c.ranUS = append(c.ranUS, f.Ran.Microseconds())
		var started int64
		if !f.Started.IsZero() {
			started = f.Started.UnixMicro()
		}
		c.startedUS = append(c.startedUS, started)
	}
	out := make([]repository.FinishResult, len(fs))
	back := make([]bool, len(fs))
	var ord int32
	var r taskScan
	err := query(ctx, finishQuery, []any{
		c.ord, c.id, c.version, c.node, c.exec, c.status, c.err, c.next, c.attempt, c.cron, c.done, c.keep, c.handoff,
		c.run, c.scheduled, c.runAttempt, c.misfire, c.parent, c.ranUS, c.startedUS, c.kind,
		c.revision, c.runArgs, c.runRevision, c.pause, c.nextKind, c.backfilled, c.backfillNext, c.countFire, c.runBatch, c.runLog, c.withdraw, c.result,
		c.id, c.exec, c.exec,
	}, append([]any{&ord}, r.dest()...), func() error {
		t, ok, err := r.taskWith(&s.opts)
		if err != nil {
			return err
		}
		if !ok || ord < 0 || int(ord) >= len(fs) {
			return fmt.Errorf("bad result row %d", ord)
		}
		out[ord], back[ord] = repository.FinishResult{Task: t}, true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: finish %d tasks: %w", len(fs), err)
	}
	for i, f := range fs {
		if !back[i] { // its fence did not hold
			out[i].Err = claimLost(f.Claim)
		}
	}
	return out, nil
}

// finishColumns is a Finish batch column by column, for unnest.
type finishColumns struct {
	ord, attempt, runAttempt               []int32
	id, version, node, exec, parent, ranUS []int64
	startedUS, revision, runRevision       []int64
	runBatch                               []int64
	status, err, cron, misfire, kind       []string
	runArgs, nextKind, runLog, result      []string
	next, backfillNext                     []*time.Time
	scheduled                              []time.Time
	done, keep, handoff, run, pause        []bool
	backfilled, countFire, withdraw        []bool
}

// newFinishColumns sizes every column for n finishes: a batch is
// hundreds of rows, and growing twenty slices by append was a good part of
// the completer's allocations.
func newFinishColumns(n int) finishColumns {
	return finishColumns{
		ord: make([]int32, 0, n), attempt: make([]int32, 0, n), runAttempt: make([]int32, 0, n),
		id: make([]int64, 0, n), version: make([]int64, 0, n), node: make([]int64, 0, n),
		exec: make([]int64, 0, n), parent: make([]int64, 0, n), ranUS: make([]int64, 0, n), startedUS: make([]int64, 0, n),
		revision: make([]int64, 0, n), runRevision: make([]int64, 0, n), runArgs: make([]string, 0, n),
		status: make([]string, 0, n), err: make([]string, 0, n), cron: make([]string, 0, n),
		misfire: make([]string, 0, n), kind: make([]string, 0, n), next: make([]*time.Time, 0, n), scheduled: make([]time.Time, 0, n),
		done: make([]bool, 0, n), keep: make([]bool, 0, n), handoff: make([]bool, 0, n), run: make([]bool, 0, n),
		pause: make([]bool, 0, n), nextKind: make([]string, 0, n), backfillNext: make([]*time.Time, 0, n),
		backfilled: make([]bool, 0, n), countFire: make([]bool, 0, n), runBatch: make([]int64, 0, n),
		runLog: make([]string, 0, n), withdraw: make([]bool, 0, n), result: make([]string, 0, n),
	}
}

// nullTimePtr maps the zero time to a NULL array element.
func nullTimePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
