package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// auditInContext is the audit insert of the entry ctx carries for a group
// action (no task): chained after the write it records, in the same
// statement, so the entry is in the log exactly when the write happened.
// Its arguments follow auditArgs; without an entry it inserts nothing.
const auditInContext = `INSERT INTO easyjob_audit (group_name, task, actor, via, origin, action, detail)
  SELECT ?::text, '', ?::text, ?::text, ?::text, ?::text, ?::text WHERE ?::boolean`

// auditOf binds auditInContext for group.
func auditOf(ctx context.Context, group string) []any {
	e, ok := repository.AuditFrom(ctx)
	return append(append([]any{group}, auditArgs(e)...), ok)
}

// PutCalendar creates or replaces calendar c.Name of group.
func (s *Store) PutCalendar(ctx context.Context, group string, c repository.Calendar) (repository.Calendar, error) {
	c.UpdatedAt = time.Time{}
	rules, err := json.Marshal(c)
	if err != nil {
		return repository.Calendar{}, fmt.Errorf("easyjob/postgres: calendar %q: %w", c.Name, err)
	}
	q := `WITH put AS (
  INSERT INTO easyjob_calendars (group_name, name, rules, updated_at) VALUES (?::text, ?::text, ?::jsonb, now())
  ON CONFLICT (group_name, name) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at
  RETURNING updated_at
), audit AS (` + auditInContext + `)
SELECT updated_at FROM put`
	if err := s.db.QueryRowContext(ctx, q, append([]any{group, c.Name, string(rules)}, auditOf(ctx, group)...)...).Scan(&c.UpdatedAt); err != nil {
		return repository.Calendar{}, fmt.Errorf("easyjob/postgres: put calendar %q of group %q: %w", c.Name, group, err)
	}
	return c, nil
}

// Calendars lists the calendars of group by name.
func (s *Store) Calendars(ctx context.Context, group string) ([]repository.Calendar, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, rules::text, updated_at FROM easyjob_calendars WHERE group_name = ? ORDER BY name COLLATE "C"`, group)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: calendars of group %q: %w", group, err)
	}
	defer rows.Close()
	out := []repository.Calendar{}
	for rows.Next() {
		var name, rules string
		var at time.Time
		if err := rows.Scan(&name, &rules, &at); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: calendars of group %q: %w", group, err)
		}
		var c repository.Calendar
		if err := json.Unmarshal([]byte(rules), &c); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: calendar %q of group %q: %w", name, group, err)
		}
		c.Name, c.UpdatedAt = name, at
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: calendars of group %q: %w", group, err)
	}
	return out, nil
}

// RemoveCalendar deletes calendar name of group.
func (s *Store) RemoveCalendar(ctx context.Context, group, name string) error {
	q := `WITH gone AS (
  DELETE FROM easyjob_calendars WHERE group_name = ?::text AND name = ?::text RETURNING 1
), audit AS (` + auditInContext + ` AND EXISTS (SELECT 1 FROM gone))
SELECT count(*) FROM gone`
	var n int
	if err := s.db.QueryRowContext(ctx, q, append([]any{group, name}, auditOf(ctx, group)...)...).Scan(&n); err != nil {
		return fmt.Errorf("easyjob/postgres: remove calendar %q of group %q: %w", name, group, err)
	}
	if n == 0 {
		return fmt.Errorf("easyjob/postgres: calendar %q in group %q: %w", name, group, repository.ErrCalendarNotFound)
	}
	return nil
}
