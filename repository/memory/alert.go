package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// alertTables are the tables easyjob_alert_rules and easyjob_alert_events
// (migration 0021), guarded by Store.mu.
type alertTables struct {
	lastRule, lastEvent int64
	rules               map[string]map[string]repository.AlertRule // group -> name -> rule
	events              []*repository.AlertEvent                   // ascending ids
}

// AlertRules lists the rules of group by name.
func (s *Store) AlertRules(ctx context.Context, group string) ([]repository.AlertRule, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]repository.AlertRule, 0, len(s.alerts.rules[group]))
	for _, r := range s.alerts.rules[group] {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b repository.AlertRule) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// PutAlertRule writes r, replacing the rule of the same name.
func (s *Store) PutAlertRule(ctx context.Context, r repository.AlertRule) (repository.AlertRule, error) {
	if err := s.begin(ctx); err != nil {
		return repository.AlertRule{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &s.alerts
	if a.rules == nil {
		a.rules = make(map[string]map[string]repository.AlertRule)
	}
	if a.rules[r.Group] == nil {
		a.rules[r.Group] = make(map[string]repository.AlertRule)
	}
	if old, ok := a.rules[r.Group][r.Name]; ok {
		r.ID = old.ID
	} else {
		a.lastRule++
		r.ID = a.lastRule
	}
	r.CreatedAt = s.now()
	a.rules[r.Group][r.Name] = r
	return r, nil
}

// RemoveAlertRule deletes a rule.
func (s *Store) RemoveAlertRule(ctx context.Context, group, name string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.alerts.rules[group][name]; !ok {
		return fmt.Errorf("easyjob/memory: alert rule %q of group %q: %w", name, group, repository.ErrAlertRuleNotFound)
	}
	delete(s.alerts.rules[group], name)
	return nil
}

// OpenAlert records e unless its key was recorded or an event of its
// rule and subject is open.
func (s *Store) OpenAlert(ctx context.Context, e repository.AlertEvent) (repository.AlertEvent, bool, error) {
	if err := s.begin(ctx); err != nil {
		return repository.AlertEvent{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var open *repository.AlertEvent
	for _, x := range s.alerts.events {
		if x.Group != e.Group || x.Rule != e.Rule || x.Subject != e.Subject {
			continue
		}
		if x.Key == e.Key {
			return repository.AlertEvent{}, false, nil
		}
		if x.Open() {
			open = x
		}
	}
	if open != nil {
		open.Count++
		return *open, false, nil
	}
	s.alerts.lastEvent++
	x := repository.AlertEvent{
		ID: s.alerts.lastEvent, Group: e.Group, Rule: e.Rule, Kind: e.Kind, Subject: e.Subject, Key: e.Key,
		Message: e.Message, Count: 1, FiredAt: s.now(), Owner: e.Owner, Version: 1,
	}
	s.alerts.events = append(s.alerts.events, &x)
	return x, true, nil
}

// ResolveAlert resolves the open event of rule and subject.
func (s *Store) ResolveAlert(ctx context.Context, group, rule, subject, message string) (repository.AlertEvent, bool, error) {
	if err := s.begin(ctx); err != nil {
		return repository.AlertEvent{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.alerts.events {
		if x.Group == group && x.Rule == rule && x.Subject == subject && x.Open() {
			x.ResolvedAt, x.ResolveMessage = s.now(), message
			x.Version++
			return *x, true, nil
		}
	}
	return repository.AlertEvent{}, false, nil
}

// AlertEvents lists events of group, newest first.
func (s *Store) AlertEvents(ctx context.Context, group string, f repository.AlertFilter) ([]repository.AlertEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	var out []repository.AlertEvent
	for i := len(s.alerts.events) - 1; i >= 0 && len(out) < limit; i-- {
		x := s.alerts.events[i]
		if x.Group != group || (f.BeforeID > 0 && x.ID >= f.BeforeID) || (f.Live && !x.Open() && !x.Pending()) {
			continue
		}
		out = append(out, *x)
	}
	return out, nil
}

// alertLocked finds event id.
func (s *Store) alertLocked(id int64) *repository.AlertEvent {
	i, ok := slices.BinarySearchFunc(s.alerts.events, id, func(x *repository.AlertEvent, id int64) int {
		return int(x.ID - id)
	})
	if !ok {
		return nil
	}
	return s.alerts.events[i]
}

// TakeAlert makes node the owner of event id at version.
func (s *Store) TakeAlert(ctx context.Context, id, version int64, node repository.NodeID) (repository.AlertEvent, error) {
	if err := s.begin(ctx); err != nil {
		return repository.AlertEvent{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.alertLocked(id)
	if x == nil || x.Version != version {
		return repository.AlertEvent{}, fmt.Errorf("easyjob/memory: take alert %d: %w", id, repository.ErrClaimLost)
	}
	x.Owner = node
	x.Version++
	return *x, nil
}

// PruneAlerts deletes the group's resolved, delivered events resolved
// before before.
func (s *Store) PruneAlerts(ctx context.Context, group string, before time.Time) (int, error) {
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.alerts.events[:0]
	k := 0
	for _, x := range s.alerts.events {
		if x.Group == group && !x.Open() && !x.Pending() && x.ResolvedAt.Before(before) {
			k++
			continue
		}
		kept = append(kept, x)
	}
	clear(s.alerts.events[len(kept):])
	s.alerts.events = kept
	return k, nil
}

// MarkAlertDelivered records a delivery attempt by its owner.
func (s *Store) MarkAlertDelivered(ctx context.Context, d repository.AlertDelivery) (repository.AlertEvent, error) {
	if err := s.begin(ctx); err != nil {
		return repository.AlertEvent{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.alertLocked(d.ID)
	if x == nil || x.Owner != d.Owner {
		return repository.AlertEvent{}, fmt.Errorf("easyjob/memory: mark alert %d delivered: %w", d.ID, repository.ErrClaimLost)
	}
	switch {
	case d.Err != "":
		x.Attempts++
		x.LastError = d.Err
	case d.Resolved:
		x.ResolveDelivered, x.Attempts, x.LastError = true, 0, ""
	default:
		x.Delivered, x.Attempts, x.LastError = true, 0, ""
	}
	x.Version++
	return *x, nil
}
