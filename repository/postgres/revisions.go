package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/easyjob-go/easyjob/repository"
)

// revisionSQL records the definition of each task row of the CTE from
// (task columns, taskCols) at the row's revision, by the actor of the
// three ? (revisionActor): the INSERT ... SELECT a change chains after its
// own write, so the revision is in the log exactly when the change
// happened. A row already at that revision (a revision number reused,
// which the stores avoid by deleting a revived tombstone's) is replaced.
func revisionSQL(from string) string {
	return `INSERT INTO easyjob_task_revisions
    (task_id, revision, handler, cron, args, options, actor, via, origin, changed_at)
  SELECT ` + from + `.id, ` + from + `.revision, ` + from + `.handler, ` + from + `.cron, ` + from + `.args::jsonb, ` +
		from + `.options, ?::text, ?::text, ?::text, now()
  FROM ` + from + `
  ON CONFLICT (task_id, revision) DO UPDATE SET
    handler = excluded.handler, cron = excluded.cron, args = excluded.args, options = excluded.options,
    actor = excluded.actor, via = excluded.via, origin = excluded.origin, changed_at = excluded.changed_at`
}

// newRevisionsSQL records revision 1 of each task row a creation wrote
// (the CTE from, its arguments as jsonb in args), as revisionSQL does, by
// the same three ?. A created row has no revision yet (a revived
// tombstone's former ones are deleted first), so a plain insert does:
// arbitrating a conflict that cannot happen would cost an index probe
// and a WAL record per row.
func newRevisionsSQL(from, args string) string {
	return `INSERT INTO easyjob_task_revisions
    (task_id, revision, handler, cron, args, options, actor, via, origin, changed_at)
  SELECT ` + from + `.id, ` + from + `.revision, ` + from + `.handler, ` + from + `.cron, ` + args + `, ` +
		from + `.options, ?::text, ?::text, ?::text, now()
  FROM ` + from
}

// revisionActor binds the actor of revisionSQL: the audit entry's ctx
// carries, empty without one.
func revisionActor(ctx context.Context) []any {
	e, _ := repository.AuditFrom(ctx)
	return []any{cleanText(e.Name), cleanText(e.Via), cleanText(e.From)}
}

// Revisions lists the definitions the task name of group took, newest
// first, a removed task's too (as History reads them). The task row is
// read with its revisions in one statement: a name without a row is
// ErrTaskNotFound, a row without revisions (a registered task never
// rescheduled) none.
func (s *Store) Revisions(ctx context.Context, group, name string) ([]repository.Revision, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.revision, r.handler, r.cron, r.args::text, r.options::text,
  r.actor, r.via, r.origin, r.changed_at
FROM easyjob_tasks t
LEFT JOIN easyjob_task_revisions r ON r.task_id = t.id
WHERE t.group_name = ? AND t.name = ?
ORDER BY r.revision DESC NULLS LAST`, group, name)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: revisions of %q in group %q: %w", name, group, err)
	}
	defer rows.Close()
	found := false
	var out []repository.Revision
	for rows.Next() {
		found = true
		var (
			rev                       sql.NullInt64
			handler, cron, args, opts sql.NullString
			actor, via, origin        sql.NullString
			changed                   sql.NullTime
		)
		if err := rows.Scan(&rev, &handler, &cron, &args, &opts, &actor, &via, &origin, &changed); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: revisions of %q in group %q: %w", name, group, err)
		}
		if !rev.Valid {
			continue // the task row alone: no revision recorded
		}
		r := repository.Revision{
			Revision: rev.Int64, Handler: handler.String, Cron: cron.String, Args: args.String,
			Actor:     repository.Actor{Name: actor.String, Via: via.String, From: origin.String},
			ChangedAt: utc(changed),
		}
		if opts.Valid && opts.String != "" {
			if err := json.Unmarshal([]byte(opts.String), &r.Options); err != nil {
				return nil, fmt.Errorf("easyjob/postgres: revision %d of %q in group %q: options: %w", r.Revision, name, group, err)
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: revisions of %q in group %q: %w", name, group, err)
	}
	if !found {
		return nil, notFound(group, name)
	}
	return out, nil
}
