package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/easyjob-go/easyjob/repository"
)

// PutCalendar creates or replaces calendar c.Name of group.
func (s *Store) PutCalendar(ctx context.Context, group string, c repository.Calendar) (repository.Calendar, error) {
	if err := s.begin(ctx); err != nil {
		return repository.Calendar{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	c.UpdatedAt = now
	c = cloneCalendar(c)
	if s.calendars == nil {
		s.calendars = map[string]map[string]repository.Calendar{}
	}
	if s.calendars[group] == nil {
		s.calendars[group] = map[string]repository.Calendar{}
	}
	s.calendars[group][c.Name] = c
	s.auditLocked(ctx, group, "", now)
	return cloneCalendar(c), nil
}

// Calendars lists the calendars of group by name.
func (s *Store) Calendars(ctx context.Context, group string) ([]repository.Calendar, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]repository.Calendar, 0, len(s.calendars[group]))
	for _, c := range s.calendars[group] {
		out = append(out, cloneCalendar(c))
	}
	slices.SortFunc(out, func(a, b repository.Calendar) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// RemoveCalendar deletes calendar name of group.
func (s *Store) RemoveCalendar(ctx context.Context, group, name string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.calendars[group][name]; !ok {
		return fmt.Errorf("%w: %q in group %q", repository.ErrCalendarNotFound, name, group)
	}
	delete(s.calendars[group], name)
	s.auditLocked(ctx, group, "", s.now())
	return nil
}

// cloneCalendar copies c's slices: the store's copy and the caller's
// never share them.
func cloneCalendar(c repository.Calendar) repository.Calendar {
	c.Dates, c.Ranges, c.Crons = slices.Clone(c.Dates), slices.Clone(c.Ranges), slices.Clone(c.Crons)
	return c
}
