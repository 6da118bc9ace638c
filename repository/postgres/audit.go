package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/easyjob-go/easyjob/repository"
)

// auditArgs are the actor, via, origin, action and detail of e, as the
// audit inserts bind them.
func auditArgs(e repository.AuditEntry) []any {
	return []any{cleanText(e.Name), cleanText(e.Via), cleanText(e.From), cleanText(e.Action), cleanText(e.Detail)}
}

// RecordAudit appends one entry to the audit log.
func (s *Store) RecordAudit(ctx context.Context, e repository.AuditEntry) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO easyjob_audit (group_name, task, actor, via, origin, action, detail)
VALUES (?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text)`,
		append([]any{e.Group, cleanText(e.Task)}, auditArgs(e)...)...)
	if err != nil {
		return fmt.Errorf("easyjob/postgres: record %s in the audit log of group %q: %w", e.Action, e.Group, err)
	}
	return nil
}

// Audit lists the audit entries of group, newest first.
func (s *Store) Audit(ctx context.Context, group string, f repository.AuditFilter) ([]repository.AuditEntry, error) {
	var where strings.Builder
	args := []any{group}
	where.WriteString(`a.group_name = ?`)
	if f.Task != "" {
		where.WriteString(` AND a.task = ?`)
		args = append(args, f.Task)
	}
	if !f.Since.IsZero() {
		where.WriteString(` AND a.at >= ?`)
		args = append(args, f.Since)
	}
	if f.BeforeID > 0 {
		where.WriteString(` AND a.id < ?`)
		args = append(args, f.BeforeID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, `SELECT a.id, a.group_name, a.at, a.actor, a.via, a.origin, a.action, a.task, a.detail
FROM easyjob_audit a WHERE `+where.String()+` ORDER BY a.id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: read the audit log of group %q: %w", group, err)
	}
	defer rows.Close()
	var out []repository.AuditEntry
	for rows.Next() {
		var e repository.AuditEntry
		var at sql.NullTime
		if err := rows.Scan(&e.ID, &e.Group, &at, &e.Name, &e.Via, &e.From, &e.Action, &e.Task, &e.Detail); err != nil {
			return nil, fmt.Errorf("easyjob/postgres: read the audit log of group %q: %w", group, err)
		}
		e.At = utc(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: read the audit log of group %q: %w", group, err)
	}
	return out, nil
}
