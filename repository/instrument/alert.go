package instrument

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// The alert store (repository.AlertStore).

func (s *store) AlertRules(ctx context.Context, group string) ([]repository.AlertRule, error) {
	return call(ctx, s, "AlertRules", func(ctx context.Context) ([]repository.AlertRule, error) { return s.inner.AlertRules(ctx, group) })
}

func (s *store) PutAlertRule(ctx context.Context, r repository.AlertRule) (repository.AlertRule, error) {
	return call(ctx, s, "PutAlertRule", func(ctx context.Context) (repository.AlertRule, error) { return s.inner.PutAlertRule(ctx, r) })
}

func (s *store) RemoveAlertRule(ctx context.Context, group, name string) error {
	_, err := call(ctx, s, "RemoveAlertRule", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.inner.RemoveAlertRule(ctx, group, name)
	})
	return err
}

// alertWon is an event and whether the call won it.
type alertWon struct {
	e   repository.AlertEvent
	won bool
}

func (s *store) OpenAlert(ctx context.Context, e repository.AlertEvent) (repository.AlertEvent, bool, error) {
	r, err := call(ctx, s, "OpenAlert", func(ctx context.Context) (alertWon, error) {
		got, won, err := s.inner.OpenAlert(ctx, e)
		return alertWon{got, won}, err
	})
	return r.e, r.won, err
}

func (s *store) ResolveAlert(ctx context.Context, group, rule, subject, message string) (repository.AlertEvent, bool, error) {
	r, err := call(ctx, s, "ResolveAlert", func(ctx context.Context) (alertWon, error) {
		got, won, err := s.inner.ResolveAlert(ctx, group, rule, subject, message)
		return alertWon{got, won}, err
	})
	return r.e, r.won, err
}

func (s *store) AlertEvents(ctx context.Context, group string, f repository.AlertFilter) ([]repository.AlertEvent, error) {
	return call(ctx, s, "AlertEvents", func(ctx context.Context) ([]repository.AlertEvent, error) { return s.inner.AlertEvents(ctx, group, f) })
}

func (s *store) TakeAlert(ctx context.Context, id, version int64, node repository.NodeID) (repository.AlertEvent, error) {
	return call(ctx, s, "TakeAlert", func(ctx context.Context) (repository.AlertEvent, error) {
		return s.inner.TakeAlert(ctx, id, version, node)
	})
}

func (s *store) PruneAlerts(ctx context.Context, group string, before time.Time) (int, error) {
	return call(ctx, s, "PruneAlerts", func(ctx context.Context) (int, error) { return s.inner.PruneAlerts(ctx, group, before) })
}

func (s *store) MarkAlertDelivered(ctx context.Context, d repository.AlertDelivery) (repository.AlertEvent, error) {
	return call(ctx, s, "MarkAlertDelivered", func(ctx context.Context) (repository.AlertEvent, error) { return s.inner.MarkAlertDelivered(ctx, d) })
}
