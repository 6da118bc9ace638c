package memory

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// auditLocked appends the entry ctx carries, if any, for an action on
// task of group that happened at now (the caller holds the lock, as the
// action did: recorded exactly when it happened).
func (s *Store) auditLocked(ctx context.Context, group, task string, now time.Time) {
	if e, ok := repository.AuditFrom(ctx); ok {
		e.Group, e.Task = group, task
		s.appendAuditLocked(e, now)
	}
}

func (s *Store) appendAuditLocked(e repository.AuditEntry, now time.Time) {
	e.ID, e.At = int64(len(s.audit))+1, now
	s.audit = append(s.audit, e)
}

// RecordAudit appends e to the audit log.
func (s *Store) RecordAudit(ctx context.Context, e repository.AuditEntry) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appendAuditLocked(e, s.now())
	return nil
}

// Audit lists the entries of group, newest first.
func (s *Store) Audit(ctx context.Context, group string, f repository.AuditFilter) ([]repository.AuditEntry, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := f.Limit
	if limit <= 0 {
		limit = defaultHistoryLimit
	}
	since := norm(f.Since)
	var out []repository.AuditEntry
	for i := len(s.audit) - 1; i >= 0 && len(out) < limit; i-- {
		e := s.audit[i]
		switch {
		case e.Group != group,
			f.Task != "" && e.Task != f.Task,
			f.BeforeID != 0 && e.ID >= f.BeforeID,
			!since.IsZero() && e.At.Before(since):
			continue
		}
		out = append(out, e)
	}
	return out, nil
}
