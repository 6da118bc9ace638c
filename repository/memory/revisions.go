package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// reviseLocked records the definition of t at its revision, by the actor
// of the audit entry ctx carries (none: empty), at now (the caller holds
// the lock, as the change did). A revision already recorded is replaced,
// as Postgres's ON CONFLICT does.
func (s *Store) reviseLocked(ctx context.Context, t repository.Task, now time.Time) {
	e, _ := repository.AuditFrom(ctx)
	r := repository.Revision{
		Revision: t.Revision, Handler: t.Handler, Cron: t.Cron, Args: t.Args, Options: t.Options,
		Actor: e.Actor, ChangedAt: now,
	}
	rs := s.revisions[t.ID]
	i, found := slices.BinarySearchFunc(rs, r.Revision, func(x repository.Revision, rev int64) int {
		return cmp.Compare(x.Revision, rev)
	})
	if found {
		rs[i] = r
		return
	}
	s.revisions[t.ID] = slices.Insert(rs, i, r)
}

// Revisions lists the definitions task name of group took, newest first,
// a removed task's too.
func (s *Store) Revisions(ctx context.Context, group, name string) ([]repository.Revision, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.anyTaskLocked(group, name) // a removed task's too
	if err != nil {
		return nil, err
	}
	rs := s.revisions[t.ID]
	var out []repository.Revision
	for i := len(rs) - 1; i >= 0; i-- {
		out = append(out, rs[i])
	}
	return out, nil
}
