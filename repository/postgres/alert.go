package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The alert rules and events (migration 0021).

const alertRuleCols = `id, group_name, name, task, kind, count, after_ms, webhook_url, webhook_secret, created_at, created_by`

const alertEventCols = `id, group_name, rule, kind, subject, event_key, message, count, fired_at, resolved_at,
  resolve_message, owner, version, delivered, resolve_delivered, attempts, last_error`

// alertScanner is a *sql.Row or *sql.Rows.
type alertScanner interface{ Scan(dest ...any) error }

func scanAlertRule(sc alertScanner) (repository.AlertRule, error) {
	var r repository.AlertRule
	var kind string
	var afterMS int64
	err := sc.Scan(&r.ID, &r.Group, &r.Name, &r.Task, &kind, &r.Count, &afterMS, &r.WebhookURL, &r.WebhookSecret, &r.CreatedAt, &r.CreatedBy)
	r.Kind, r.After = repository.AlertKind(kind), time.Duration(afterMS)*time.Millisecond
	r.CreatedAt = r.CreatedAt.UTC()
	return r, err
}

func scanAlertEvent(sc alertScanner) (repository.AlertEvent, error) {
	var e repository.AlertEvent
	var kind string
	var resolved sql.NullTime
	var owner int64
	err := sc.Scan(&e.ID, &e.Group, &e.Rule, &kind, &e.Subject, &e.Key, &e.Message, &e.Count, &e.FiredAt, &resolved,
		&e.ResolveMessage, &owner, &e.Version, &e.Delivered, &e.ResolveDelivered, &e.Attempts, &e.LastError)
	e.Kind, e.Owner, e.FiredAt = repository.AlertKind(kind), repository.NodeID(owner), e.FiredAt.UTC()
	if resolved.Valid {
		e.ResolvedAt = resolved.Time.UTC()
	}
	return e, err
}

// AlertRules lists the rules of group by name.
func (s *Store) AlertRules(ctx context.Context, group string) ([]repository.AlertRule, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+alertRuleCols+` FROM easyjob_alert_rules WHERE group_name = ? ORDER BY name`, group)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: alert rules of group %q: %w", group, err)
	}
	defer rows.Close()
	var out []repository.AlertRule
	for rows.Next() {
		r, err := scanAlertRule(rows)
		if err != nil {
			return nil, fmt.Errorf("easyjob/postgres: alert rules of group %q: %w", group, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: alert rules of group %q: %w", group, err)
	}
	return out, nil
}

// PutAlertRule writes r, replacing the rule of the same name.
func (s *Store) PutAlertRule(ctx context.Context, r repository.AlertRule) (repository.AlertRule, error) {
	row := s.db.QueryRowContext(ctx, `INSERT INTO easyjob_alert_rules
  (group_name, name, task, kind, count, after_ms, webhook_url, webhook_secret, created_by)
VALUES (?::text, ?::text, ?::text, ?::text, ?::int, ?::bigint, ?::text, ?::text, ?::text)
ON CONFLICT (group_name, name) DO UPDATE SET task = excluded.task, kind = excluded.kind, count = excluded.count,
  after_ms = excluded.after_ms, webhook_url = excluded.webhook_url, webhook_secret = excluded.webhook_secret,
  created_by = excluded.created_by, created_at = now()
RETURNING `+alertRuleCols,
		r.Group, cleanText(r.Name), cleanText(r.Task), string(r.Kind), r.Count, r.After.Milliseconds(),
		cleanText(r.WebhookURL), cleanText(r.WebhookSecret), cleanText(r.CreatedBy))
	got, err := scanAlertRule(row)
	if err != nil {
		return repository.AlertRule{}, fmt.Errorf("easyjob/postgres: put alert rule %q of group %q: %w", r.Name, r.Group, err)
	}
	return got, nil
}

// RemoveAlertRule deletes a rule.
func (s *Store) RemoveAlertRule(ctx context.Context, group, name string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM easyjob_alert_rules WHERE group_name = ? AND name = ?`, group, name)
	if err != nil {
		return fmt.Errorf("easyjob/postgres: remove alert rule %q of group %q: %w", name, group, err)
	}
	if k, err := res.RowsAffected(); err != nil || k == 0 {
		return fmt.Errorf("easyjob/postgres: remove alert rule %q of group %q: %w", name, group, repository.ErrAlertRuleNotFound)
	}
	return nil
}

// OpenAlert inserts e unless the unique key or the open index refuses
// it; then the open event of another key, if any, counts one more
// occurrence. One statement.
func (s *Store) OpenAlert(ctx context.Context, e repository.AlertEvent) (repository.AlertEvent, bool, error) {
	row := s.db.QueryRowContext(ctx, `WITH ins AS (
  INSERT INTO easyjob_alert_events (group_name, rule, kind, subject, event_key, message, owner)
  VALUES (?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::bigint)
  ON CONFLICT DO NOTHING
  RETURNING `+alertEventCols+`, true AS won
), bump AS (
  UPDATE easyjob_alert_events SET count = count + 1, version = version + 1
  WHERE group_name = ?::text AND rule = ?::text AND subject = ?::text AND resolved_at IS NULL
    AND event_key <> ?::text AND NOT EXISTS (SELECT 1 FROM ins)
    AND NOT EXISTS (SELECT 1 FROM easyjob_alert_events k
      WHERE k.group_name = ?::text AND k.rule = ?::text AND k.subject = ?::text AND k.event_key = ?::text)
  RETURNING `+alertEventCols+`, false AS won
)
SELECT * FROM ins UNION ALL SELECT * FROM bump`,
		e.Group, cleanText(e.Rule), string(e.Kind), cleanText(e.Subject), cleanText(e.Key), cleanText(e.Message), int64(e.Owner),
		e.Group, cleanText(e.Rule), cleanText(e.Subject), cleanText(e.Key),
		e.Group, cleanText(e.Rule), cleanText(e.Subject), cleanText(e.Key))
	var won bool
	got, err := scanAlertEvent(wonScanner{row, &won})
	if errors.Is(err, sql.ErrNoRows) {
		return repository.AlertEvent{}, false, nil
	}
	if err != nil {
		return repository.AlertEvent{}, false, fmt.Errorf("easyjob/postgres: open alert %s of %q in group %q: %w", e.Rule, e.Subject, e.Group, err)
	}
	return got, won, nil
}

// wonScanner scans a row's event columns, then its won column.
type wonScanner struct {
	sc  alertScanner
	won *bool
}

func (w wonScanner) Scan(dest ...any) error { return w.sc.Scan(append(dest, w.won)...) }

// ResolveAlert resolves the open event of rule and subject.
func (s *Store) ResolveAlert(ctx context.Context, group, rule, subject, message string) (repository.AlertEvent, bool, error) {
	row := s.db.QueryRowContext(ctx, `UPDATE easyjob_alert_events
SET resolved_at = clock_timestamp(), resolve_message = ?::text, version = version + 1
WHERE group_name = ? AND rule = ? AND subject = ? AND resolved_at IS NULL
RETURNING `+alertEventCols, cleanText(message), group, rule, subject)
	e, err := scanAlertEvent(row)
	if errors.Is(err, sql.ErrNoRows) {
		return repository.AlertEvent{}, false, nil
	}
	if err != nil {
		return repository.AlertEvent{}, false, fmt.Errorf("easyjob/postgres: resolve alert %s of %q in group %q: %w", rule, subject, group, err)
	}
	return e, true, nil
}

// AlertEvents lists events of group, newest first; the live ones on
// their partial index.
func (s *Store) AlertEvents(ctx context.Context, group string, f repository.AlertFilter) ([]repository.AlertEvent, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q := `SELECT ` + alertEventCols + ` FROM easyjob_alert_events WHERE group_name = ?`
	args := []any{group}
	if f.Live {
		q += ` AND (resolved_at IS NULL OR NOT delivered OR NOT resolve_delivered)`
	}
	if f.BeforeID > 0 {
		q += ` AND id < ?`
		args = append(args, f.BeforeID)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: alert events of group %q: %w", group, err)
	}
	defer rows.Close()
	var out []repository.AlertEvent
	for rows.Next() {
		e, err := scanAlertEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("easyjob/postgres: alert events of group %q: %w", group, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: alert events of group %q: %w", group, err)
	}
	return out, nil
}

// TakeAlert makes node the owner of event id at version.
func (s *Store) TakeAlert(ctx context.Context, id, version int64, node repository.NodeID) (repository.AlertEvent, error) {
	row := s.db.QueryRowContext(ctx, `UPDATE easyjob_alert_events SET owner = ?::bigint, version = version + 1
WHERE id = ? AND version = ? RETURNING `+alertEventCols, int64(node), id, version)
	e, err := scanAlertEvent(row)
	if errors.Is(err, sql.ErrNoRows) {
		return repository.AlertEvent{}, fmt.Errorf("easyjob/postgres: take alert %d: %w", id, repository.ErrClaimLost)
	}
	if err != nil {
		return repository.AlertEvent{}, fmt.Errorf("easyjob/postgres: take alert %d: %w", id, err)
	}
	return e, nil
}

// PruneAlerts deletes the group's resolved, delivered events resolved
// before before.
func (s *Store) PruneAlerts(ctx context.Context, group string, before time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM easyjob_alert_events
WHERE group_name = ? AND resolved_at < ? AND delivered AND resolve_delivered`, group, before)
	if err != nil {
		return 0, fmt.Errorf("easyjob/postgres: prune alerts of group %q: %w", group, err)
	}
	k, err := res.RowsAffected()
	return int(k), err
}

// MarkAlertDelivered records a delivery attempt by its owner.
func (s *Store) MarkAlertDelivered(ctx context.Context, d repository.AlertDelivery) (repository.AlertEvent, error) {
	set := `delivered = true, attempts = 0, last_error = ''`
	args := []any{}
	switch {
	case d.Err != "":
		set = `attempts = attempts + 1, last_error = ?::text`
		args = append(args, cleanText(d.Err))
	case d.Resolved:
		set = `resolve_delivered = true, attempts = 0, last_error = ''`
	}
	args = append(args, d.ID, int64(d.Owner))
	row := s.db.QueryRowContext(ctx, `UPDATE easyjob_alert_events SET `+set+`, version = version + 1
WHERE id = ? AND owner = ? RETURNING `+alertEventCols, args...)
	e, err := scanAlertEvent(row)
	if errors.Is(err, sql.ErrNoRows) {
		return repository.AlertEvent{}, fmt.Errorf("easyjob/postgres: mark alert %d delivered: %w", d.ID, repository.ErrClaimLost)
	}
	if err != nil {
		return repository.AlertEvent{}, fmt.Errorf("easyjob/postgres: mark alert %d delivered: %w", d.ID, err)
	}
	return e, nil
}
