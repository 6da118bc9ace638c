package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// The operator actions below are single UPDATEs keyed by (group, name);
// a removed task (a tombstone kept for its history) is not found.
// None of them bumps the version of a doing row: that would fence the fire
// that is running. They set a flag (paused, trigger_requested) or change
// the cron instead, and the fire's Finish applies it.

// Pause stops future claims: pending becomes paused (version+1); a doing
// task only gets the flag, and its finish parks it.
func (s *Store) Pause(ctx context.Context, group, name string) (repository.Task, error) {
	q := `UPDATE easyjob_tasks t SET
  paused = true,
  status = CASE WHEN t.status = 'pending' THEN 'paused' ELSE t.status END,
  version = t.version + CASE WHEN t.status = 'pending' THEN 1 ELSE 0 END,
  updated_at = now()
WHERE t.group_name = ? AND t.name = ? AND t.status <> 'removed'
RETURNING ` + taskCols("t")
	return s.control(ctx, "pause", group, name, q, false, false, group, name)
}

// Resume clears the pause: paused becomes pending (version+1) and the
// group's loaders are woken; a doing task only loses the flag.
func (s *Store) Resume(ctx context.Context, group, name string) (repository.Task, error) {
	q := `UPDATE easyjob_tasks t SET
  paused = false,
  status = CASE WHEN t.status = 'paused' THEN 'pending' ELSE t.status END,
  version = t.version + CASE WHEN t.status = 'paused' THEN 1 ELSE 0 END,
  updated_at = now()
WHERE t.group_name = ? AND t.name = ? AND t.status <> 'removed'
RETURNING ` + taskCols("t")
	return s.control(ctx, "resume", group, name, q, true, false, group, name)
}

// Trigger asks for one fire now. A task that is not doing becomes pending
// and due now (the paused flag is kept, so its finish re-parks it); a
// doing one gets trigger_requested and its finish schedules the extra fire.
// Either way fire_args holds the arguments of the fire asked for (NULL
// for the schedule's own): the finish of the doing fire keeps them for
// the extra one.
func (s *Store) Trigger(ctx context.Context, group, name string, args string) (repository.Task, error) {
	if err := repository.CheckArgs(fmt.Sprintf("trigger %q in group %q", name, group), args); err != nil {
		return repository.Task{}, err
	}
	q := `UPDATE easyjob_tasks t SET
  status = CASE WHEN t.status = 'doing' THEN 'doing' ELSE 'pending' END,
  next_start_time = CASE WHEN t.status = 'doing' THEN t.next_start_time ELSE now() END,
  attempt = CASE WHEN t.status = 'doing' THEN t.attempt ELSE 1 END,
  trigger_requested = (t.status = 'doing'),
  fire_kind = CASE WHEN t.status = 'doing' THEN t.fire_kind ELSE 'manual' END,
  fire_args = nullif(?::text, '')::jsonb,
  version = t.version + CASE WHEN t.status = 'doing' THEN 0 ELSE 1 END,
  updated_at = now()
WHERE t.group_name = ? AND t.name = ? AND t.status <> 'removed'
RETURNING ` + taskCols("t")
	return s.control(ctx, "trigger", group, name, q, true, false, args, group, name)
}

// Backfill records a backfill of [first, to] on the task unless one has
// fires left: the row is due at once for it (due_at), its own next fire
// stays. A doing row keeps its version; its finish sees the backfill and
// does not keep the claim.
func (s *Store) Backfill(ctx context.Context, group, name string, first, to time.Time) (repository.Task, error) {
	q := `UPDATE easyjob_tasks t SET
  backfill_next = ?::timestamptz, backfill_to = ?::timestamptz, backfill_at = now(),
  version = t.version + CASE WHEN t.status = 'doing' THEN 0 ELSE 1 END,
  updated_at = now()
WHERE t.group_name = ? AND t.name = ? AND t.status <> 'removed' AND t.backfill_next IS NULL
RETURNING ` + taskCols("t")
	t, err := s.control(ctx, "backfill", group, name, q, true, false, first.UTC(), to.UTC(), group, name)
	if errors.Is(err, repository.ErrTaskNotFound) {
		if cur, rerr := s.Task(ctx, group, name); rerr == nil && !cur.BackfillNext.IsZero() {
			return cur, fmt.Errorf("easyjob/postgres: backfill %q of group %q until %s: %w", name, group,
				cur.BackfillTo.Format(time.RFC3339), repository.ErrBackfillInProgress)
		}
	}
	return t, err
}

// Reschedule sets a new cron and next fire, revision+1. A doing row keeps
// its version; its Finish notices the cron changed and keeps this
// next_start_time. A cron other than the code's marks the row overridden;
// the code's clears the mark. The cron's fire replaces a triggered one,
// arguments and all, unless the row is doing (a trigger requested while
// it runs stands). The same statement records the new revision.
func (s *Store) Reschedule(ctx context.Context, group, name, cron string, next []time.Time) (repository.Task, error) {
	q := `UPDATE easyjob_tasks t SET
  cron = ?::text,
  overridden_at = CASE WHEN ?::text = t.code_cron THEN NULL ELSE now() END,
  ` + retimeSQL + `,
  status = CASE WHEN t.status = 'finished' THEN 'pending' ELSE t.status END,
  fire_kind = CASE WHEN t.status = 'doing' THEN t.fire_kind ELSE '' END,
  fire_args = CASE WHEN t.status = 'doing' THEN t.fire_args END,
  revision = t.revision + 1,
  version = t.version + CASE WHEN t.status = 'doing' THEN 0 ELSE 1 END,
  updated_at = now()
WHERE t.group_name = ? AND t.name = ? AND t.status <> 'removed'
RETURNING ` + taskCols("t")
	fires := pgdialect.Array(next)
	return s.control(ctx, "reschedule", group, name, q, true, true, cron, cron, fires, fires, group, name)
}

// retimeSQL sets the next fire of a row an operator re-times, given the
// new cron's first fires twice (two ? arrays, ascending): a row not
// claimed takes the first (none: keeps its own); a claimed one (doing)
// the first after its claimed fire (repository.FireAfter), remembered in
// held_fire until its finish or next claim, since next_start_time no
// longer says it.
const retimeSQL = `next_start_time = CASE WHEN t.status = 'doing'
    THEN coalesce((SELECT min(f) FROM unnest(?::timestamptz[]) f WHERE f > coalesce(t.held_fire, t.next_start_time)),
      coalesce(t.held_fire, t.next_start_time))
    ELSE coalesce((?::timestamptz[])[1], t.next_start_time) END,
  held_fire = CASE WHEN t.status = 'doing' THEN coalesce(t.held_fire, t.next_start_time) END`

// control runs one operator action, the UPDATE ... RETURNING of task
// columns update, as one statement that also wakes the task's group when
// notify is set, records the audit entry ctx carries and, when revise is
// set (an edit of the definition), the row's new revision by the entry's
// actor: both are written exactly when the action found its task.
func (s *Store) control(ctx context.Context, op, group, name, update string, notify, revise bool, args ...any) (repository.Task, error) {
	q := `WITH t AS (` + update + `)`
	tail := ``
	if notify {
		q += `,
n AS (SELECT pg_notify('` + notifyChannel + `', t.group_name) FROM t)`
		tail = ` WHERE (SELECT count(*) FROM n) >= 0`
	}
	if e, ok := repository.AuditFrom(ctx); ok {
		q += `,
a AS (INSERT INTO easyjob_audit (group_name, task, actor, via, origin, action, detail)
  SELECT t.group_name, t.name, ?::text, ?::text, ?::text, ?::text, ?::text FROM t)`
		args = append(args, auditArgs(e)...)
	}
	if revise {
		q += `,
rv AS (` + revisionSQL("t") + `)`
		args = append(args, revisionActor(ctx)...)
	}
	q += `
SELECT ` + taskCols("t") + ` FROM t` + tail
	tasks, err := scanTasks(s.db.QueryContext(ctx, q, args...))
	if err != nil {
		return repository.Task{}, fmt.Errorf("easyjob/postgres: %s %q in group %q: %w", op, name, group, err)
	}
	return oneTask(tasks, group, name)
}
