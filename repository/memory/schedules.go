package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// CreateSchedules inserts the runtime schedules defs into group, all or
// nothing: everything is checked (distinct names, JSON arguments, names
// free or held by a removed row) before anything is written. A removed
// row (a tombstone) is revived under its id, version+1, as a registration
// revives one; its creation time and last result stay, its former
// revisions go. Each written row records revision 1 and the audit entry
// ctx carries, and the group is woken once.
func (s *Store) CreateSchedules(ctx context.Context, group string, defs []repository.ScheduleDef) ([]repository.Task, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if err := repository.CheckScheduleDefs(group, defs); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range defs {
		if t, err := s.anyTaskLocked(group, d.Name); err == nil && t.Status != repository.TaskRemoved {
			return nil, fmt.Errorf("easyjob: create %d schedules in group %q: task %q: %w",
				len(defs), group, d.Name, repository.ErrTaskExists)
		}
	}
	now := s.now()
	out := make([]repository.Task, len(defs))
	for i, d := range defs {
		u := repository.Task{
			Group: group, Name: d.Name, Handler: d.Handler, Dynamic: true,
			Cron: d.Cron, CodeCron: d.Cron, Args: d.Args, Options: d.Options,
			Status: createdStatus(d), Paused: d.Paused, NextStartTime: norm(d.NextStartTime),
			Version: 1, Revision: 1, Attempt: 1, CreatedAt: now, UpdatedAt: now,
		}
		if u.NextStartTime.IsZero() {
			u.NextStartTime = now // the column is NOT NULL: Postgres writes now()
		}
		if old, err := s.anyTaskLocked(group, d.Name); err == nil { // a tombstone
			u.ID, u.Version, u.CreatedAt = old.ID, old.Version+1, old.CreatedAt
			u.LastStatus, u.LastError, u.LastFinishedAt, u.Failures = old.LastStatus, old.LastError, old.LastFinishedAt, old.Failures
			s.replaceLocked(old, u)
			delete(s.revisions, old.ID) // a new task under the old id: its former definitions go
			out[i] = *old
		} else {
			s.lastTask++
			u.ID = s.lastTask
			t := &u
			s.insertLocked(t)
			out[i] = *t
		}
		s.reviseLocked(ctx, out[i], now)
		s.auditLocked(repository.AuditDefaults(ctx, "create", "handler "+d.Handler+" cron "+d.Cron), group, d.Name, now)
	}
	s.notifyLocked(group)
	return out, nil
}

// createdStatus is the status a created schedule starts in: finished
// when its cron has no fire, else paused when created paused (as Pause
// leaves a pending row), else pending.
func createdStatus(d repository.ScheduleDef) repository.TaskStatus {
	switch {
	case d.Finished:
		return repository.TaskFinished
	case d.Paused:
		return repository.TaskPaused
	}
	return repository.TaskPending
}

// UpdateSchedule replaces the definition of the runtime schedule name, in
// the manner of Reschedule: revision+1; a doing row keeps its version and
// its claim's fire (its finish leaves the new next fire in place); any
// other takes version+1 and the new next fire as a first attempt of the
// cron's. A paused row stays paused; a finished one becomes pending (paused
// when its flag is set), or stays finished when the new cron has no fire.
func (s *Store) UpdateSchedule(ctx context.Context, group, name string, def repository.ScheduleDef) (repository.Task, error) {
	if err := s.begin(ctx); err != nil {
		return repository.Task{}, err
	}
	if err := repository.CheckArgs(fmt.Sprintf("update schedule %q of group %q", name, group), def.Args); err != nil {
		return repository.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.taskLocked(group, name)
	if err != nil {
		return repository.Task{}, err
	}
	if !t.Dynamic {
		return repository.Task{}, fmt.Errorf("easyjob: update schedule %q of group %q: a task registered in code: %w",
			name, group, repository.ErrNotDynamic)
	}
	now := s.now()
	u := *t
	u.Handler, u.Cron, u.CodeCron, u.OverriddenAt = def.Handler, def.Cron, def.Cron, time.Time{}
	u.Args, u.Options = def.Args, def.Options
	s.retimeLocked(&u, def.UpdateFires())
	u.Revision++
	if t.Status != repository.TaskDoing {
		switch {
		case def.Finished && (t.Status == repository.TaskPending || t.Status == repository.TaskFinished):
			u.Status = repository.TaskFinished
		case t.Paused:
			u.Status = repository.TaskPaused
		default:
			u.Status = repository.TaskPending
		}
		u.Attempt, u.FireKind, u.FireArgs = 1, "", ""
		u.Version++
	}
	u.UpdatedAt = now
	s.replaceLocked(t, u)
	s.reviseLocked(ctx, *t, now)
	s.auditLocked(repository.AuditDefaults(ctx, "update", "handler "+def.Handler+" cron "+def.Cron), group, name, now)
	s.notifyLocked(group)
	return *t, nil
}

// PublishHandlers upserts hs for group by kind: the newest schema wins (the
// last of a kind given twice). An empty schema is stored as {} (any
// arguments). An empty list does no I/O.
func (s *Store) PublishHandlers(ctx context.Context, group string, hs []repository.HandlerDef) error {
	if len(hs) == 0 {
		return nil
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	schemas := make(map[string]json.RawMessage, len(hs))
	for _, h := range hs {
		schema := string(h.Schema)
		if strings.TrimSpace(schema) == "" {
			schema = "{}"
		}
		if !json.Valid([]byte(schema)) {
			return fmt.Errorf("easyjob: publish handler %q of group %q: schema is not JSON", h.Kind, group)
		}
		schemas[h.Kind] = json.RawMessage(schema)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.handlers[group]
	if g == nil {
		g = make(map[string]json.RawMessage, len(schemas))
		s.handlers[group] = g
	}
	for k, v := range schemas {
		g[k] = v
	}
	return nil
}

// Handlers lists the kinds published for group, by kind (byte order).
func (s *Store) Handlers(ctx context.Context, group string) ([]repository.HandlerDef, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.handlers[group]
	kinds := make([]string, 0, len(g))
	for k := range g {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var out []repository.HandlerDef
	for _, k := range kinds {
		out = append(out, repository.HandlerDef{Kind: k, Schema: slices.Clone(g[k])})
	}
	return out, nil
}
