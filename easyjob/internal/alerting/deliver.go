package alerting

import (
	"context"
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository"
)

// notifyTimeout bounds one notifier's delivery of one notification.
const notifyTimeout = 2 * time.Minute

// markTimeout bounds the record of a delivery.
const markTimeout = 5 * time.Second

// enqueue hands an event this node owns to the deliverer, unless it is
// queued already or waits for a retry.
func (s *Service) enqueue(e repository.AlertEvent) {
	s.deliverMu.Lock()
	defer s.deliverMu.Unlock()
	if s.inflight[e.ID] || time.Now().Before(s.retryAt[e.ID]) {
		return
	}
	select {
	case s.out <- e:
		s.inflight[e.ID] = true
	default: // full: the next pass queues it
	}
}

// deliverLoop delivers queued events until ctx is done.
func (s *Service) deliverLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-s.out:
			s.deliver(ctx, e)
			s.deliverMu.Lock()
			delete(s.inflight, e.ID)
			s.deliverMu.Unlock()
		}
	}
}

// deliver sends e's pending notifications: the firing one, then the
// resolved one.
func (s *Service) deliver(ctx context.Context, e repository.AlertEvent) {
	ns := s.cfg.Notifiers
	if r := s.idx.Load().byName[e.Rule]; r != nil {
		ns = r.notifiers
	}
	if !e.Delivered {
		ev := alert.FromStore(e)
		ev.State, ev.ResolvedAt, ev.Resolution = alert.Firing, time.Time{}, ""
		got, ok := s.notify(ctx, e, ev, ns, false)
		if !ok {
			return
		}
		e = got
	}
	if !e.Open() && !e.ResolveDelivered {
		s.notify(ctx, e, alert.FromStore(e), ns, true)
	}
}

// notify delivers ev to every notifier that did not have it yet and
// records the outcome.
func (s *Service) notify(ctx context.Context, e repository.AlertEvent, ev alert.Event, ns []alert.Notifier, resolved bool) (repository.AlertEvent, bool) {
	var failed error
	for i, n := range ns {
		k := doneKey{e.ID, resolved, i}
		s.deliverMu.Lock()
		done := s.done[k]
		s.deliverMu.Unlock()
		if done {
			continue
		}
		nctx, cancel := context.WithTimeout(ctx, notifyTimeout)
		err := n.Notify(nctx, ev)
		cancel()
		if err != nil {
			failed = errors.Join(failed, err)
			continue
		}
		s.deliverMu.Lock()
		s.done[k] = true
		s.deliverMu.Unlock()
	}
	if failed != nil && ctx.Err() != nil {
		return e, false // shutting down: a peer takes it over
	}
	d := repository.AlertDelivery{ID: e.ID, Owner: s.node.ID(), Resolved: resolved}
	if failed != nil {
		d.Err = failed.Error()
	}
	// Recorded even while shutting down: what was delivered must not be
	// delivered again by the peer that takes the rest over.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	got, err := s.store.MarkAlertDelivered(mctx, d)
	cancel()
	s.deliverMu.Lock()
	defer s.deliverMu.Unlock()
	if failed != nil {
		wait := min(time.Second<<min(e.Attempts, 8), 5*time.Minute)
		s.retryAt[e.ID] = time.Now().Add(wait)
		s.log.Warn().Err(failed).Int64("alert", e.ID).Str("rule", e.Rule).Int("attempt", e.Attempts+1).
			Stringer("retry_in", wait).Msg("easyjob: alert delivery failed")
		return e, false
	}
	if err != nil {
		// Delivered, not recorded: the notifiers that had it are
		// remembered, the next pass records it without sending again.
		s.log.Warn().Err(err).Int64("alert", e.ID).Msg("easyjob: an alert was delivered, its record failed")
		return e, false
	}
	for i := range ns {
		delete(s.done, doneKey{e.ID, resolved, i})
	}
	delete(s.retryAt, e.ID)
	return got, true
}
