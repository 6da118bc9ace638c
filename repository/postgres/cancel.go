package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Cancel stamps the task's row with the request and who made it, if a
// run of the task is in progress (a running execution row), recording
// the audit entry ctx carries. The version is not touched: the claim of
// the running fire stays valid, its node reads the request
// (CancelsSince) and cancels the job.
func (s *Store) Cancel(ctx context.Context, group, name string) (repository.Task, error) {
	by := ""
	if e, ok := repository.AuditFrom(ctx); ok {
		by = cleanText(e.Name)
	}
	q := `UPDATE easyjob_tasks t SET cancel_at = clock_timestamp(), cancel_by = ?::text
WHERE t.group_name = ? AND t.name = ? AND t.status <> 'removed'
  AND EXISTS (SELECT 1 FROM easyjob_executions e WHERE e.task_id = t.id AND e.status = 'running')
RETURNING ` + taskCols("t")
	t, err := s.control(ctx, "cancel", group, name, q, false, false, by, group, name)
	if !errors.Is(err, repository.ErrTaskNotFound) {
		return t, err
	}
	if _, terr := s.Task(ctx, group, name); terr != nil {
		return repository.Task{}, terr
	}
	return repository.Task{}, fmt.Errorf("easyjob/postgres: cancel %q in group %q: %w", name, group, repository.ErrNotRunning)
}

// CancelsSince reads the group's cancel requests made after since, on
// the partial index of requests (migration 0019).
func (s *Store) CancelsSince(ctx context.Context, group string, since time.Time) ([]repository.RunCancel, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, cancel_at, cancel_by FROM easyjob_tasks
WHERE group_name = ? AND cancel_at IS NOT NULL AND cancel_at > ?
ORDER BY cancel_at`, group, since)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: cancel requests of group %q: %w", group, err)
	}
	defer rows.Close()
	var out []repository.RunCancel
	for rows.Next() {
		var c repository.RunCancel
		if err := rows.Scan(&c.Task, &c.At, &c.By); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: cancel requests of group %q: %w", group, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: cancel requests of group %q: %w", group, err)
	}
	return out, nil
}
