package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// ChainRun returns the newest abandoned execution of task at scheduled and
// every execution under it, oldest first (both by partial indexes, see
// migration 0007).
func (s *Store) ChainRun(ctx context.Context, task repository.TaskID, scheduled time.Time) ([]repository.Execution, error) {
	q := `WITH RECURSIVE r AS (
  (SELECT e.* FROM easyjob_executions e
   WHERE e.task_id = ? AND e.scheduled_at = ?
   ORDER BY e.status = 'running', e.id DESC LIMIT 1)
  UNION ALL
  SELECT c.* FROM easyjob_executions c JOIN r ON c.parent_execution_id = r.id
  WHERE c.parent_execution_id IS NOT NULL
)
SELECT t.name, ` + execCols("r") + ` FROM r JOIN easyjob_tasks t ON t.id = r.task_id ORDER BY r.id`
	out, err := scanNamedExecs(s.db.QueryContext(ctx, q, int64(task), scheduled.UTC()))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: chain run of task %d at %s: %w", task, scheduled.UTC().Format(time.RFC3339), err)
	}
	return out, nil
}
