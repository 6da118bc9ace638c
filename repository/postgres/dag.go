package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/easyjob-go/easyjob/repository"
)

// stepRunsWindow bounds the runs of each parent AdvanceStep reads, newest
// first: a step waits for fires of the recent past, not for old ones.
// Only runs after the parent's run the step last followed are read (a
// parent's runs of later fires began after it): an ask with nothing new
// reads an index entry or two per parent.
const stepRunsWindow = 200

// AdvanceStep locks the step's row, reads the recent runs of its parents
// and, when they complete a fire later than the step's last, makes the
// step due for the earliest (repository.PickStepFire), waking the group.
// Nodes that ask at once (two parents finishing together) queue on the
// row lock: each reads the other's finished runs once it has the lock.
func (s *Store) AdvanceStep(ctx context.Context, a repository.StepAdvance) (time.Time, error) {
	var fire time.Time
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var (
			id     int64
			status string
			next   time.Time
			last   time.Time
			paused bool
			seen   string
		)
		err := tx.QueryRowContext(ctx, `SELECT id, status, next_start_time, coalesce(dag_fire, created_at), paused, coalesce(dag_inputs, '{}'::jsonb)::text
FROM easyjob_tasks WHERE group_name = ? AND name = ? FOR UPDATE`, a.Group, a.Step).Scan(&id, &status, &next, &last, &paused, &seen)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(a.Group, a.Step)
		}
		if err != nil {
			return err
		}
		if (status != string(repository.TaskPending) && status != string(repository.TaskPaused)) || !next.Equal(repository.AwaitingParents) {
			return nil // claimed, due already or ended: its own finish asks again
		}
		names := make([]string, len(a.Parents))
		for i, p := range a.Parents {
			names[i] = p.Name
		}
		rows, err := tx.QueryContext(ctx, `SELECT t.name, e.id, e.scheduled_at, e.attempt, e.status
FROM easyjob_tasks t
CROSS JOIN LATERAL (
  SELECT x.id, x.scheduled_at, x.attempt, x.status FROM easyjob_executions x
  WHERE x.task_id = t.id AND x.id > coalesce((?::jsonb ->> t.name)::bigint, 0) AND x.batch = 0 AND x.status <> 'fenced'
  ORDER BY x.id DESC LIMIT ?) e
WHERE t.group_name = ? AND t.name = ANY(?::text[])
ORDER BY e.id`, seen, stepRunsWindow, a.Group, pgdialect.Array(names))
		if err != nil {
			return err
		}
		runs, err := scanStepRuns(rows)
		if err != nil {
			return err
		}
		pick := repository.PickStepFire
		if paused || status == string(repository.TaskPaused) {
			pick = repository.LastStepFire
		}
		f, in, ok := pick(a, last, runs)
		if !ok {
			return nil
		}
		inputs, err := json.Marshal(in)
		if err != nil {
			return err
		}
		if paused || status == string(repository.TaskPaused) {
			// Paused: the fires completed meanwhile are passed, not run
			// on resume.
			_, err := tx.ExecContext(ctx, `UPDATE easyjob_tasks SET dag_fire = ?, dag_inputs = ?::jsonb WHERE id = ?`, f.UTC(), string(inputs), id)
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE easyjob_tasks SET next_start_time = ?, dag_fire = ?, dag_inputs = ?::jsonb,
  fire_kind = 'chain', attempt = 1, trigger_requested = false, version = version + 1, updated_at = now()
WHERE id = ?`, f.UTC(), f.UTC(), string(inputs), id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `SELECT pg_notify(?, ?)`, notifyChannel, a.Group); err != nil {
			return err
		}
		fire = f
		return nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("easyjob/postgres: advance DAG step %q in group %q: %w", a.Step, a.Group, err)
	}
	return fire, nil
}

// ParentResults reads the results of the parent runs the step's current
// fire follows (its dag_inputs).
func (s *Store) ParentResults(ctx context.Context, step repository.TaskID) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT i.key, coalesce(e.result, '')
FROM easyjob_tasks t
CROSS JOIN LATERAL jsonb_each_text(coalesce(t.dag_inputs, '{}'::jsonb)) i
LEFT JOIN easyjob_executions e ON e.id = i.value::bigint
WHERE t.id = ?`, int64(step))
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: parent results of task %d: %w", step, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, res string
		if err := rows.Scan(&name, &res); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: parent results of task %d: %w", step, err)
		}
		out[name] = res
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: parent results of task %d: %w", step, err)
	}
	return out, nil
}

// scanStepRuns reads AdvanceStep's parent runs by parent name.
func scanStepRuns(rows *sql.Rows) (map[string][]repository.StepRun, error) {
	defer rows.Close()
	runs := map[string][]repository.StepRun{}
	for rows.Next() {
		var name, st string
		var r repository.StepRun
		if err := rows.Scan(&name, &r.ID, &r.ScheduledAt, &r.Attempt, &st); err != nil {
			return nil, err
		}
		r.Status = repository.ExecStatus(st)
		runs[name] = append(runs[name], r)
	}
	return runs, rows.Err()
}
