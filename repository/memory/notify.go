package memory

import "context"

// listener is one Listen call. Its channel holds at most one pending wake:
// notifications that arrive while wake runs are coalesced into one call.
type listener struct{ ch chan struct{} }

// Listen calls wake whenever the store would make Postgres notify group
// (tasks registered or changed, released, recovered, resumed, triggered),
// until ctx is done; then it returns nil. Bursts may be coalesced into one
// wake.
func (s *Store) Listen(ctx context.Context, group string, wake func()) error {
	s.calls.Add(1)
	l := &listener{ch: make(chan struct{}, 1)}
	s.mu.Lock()
	set := s.listeners[group]
	if set == nil {
		set = make(map[*listener]struct{})
		s.listeners[group] = set
	}
	set[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(set, l)
		if len(set) == 0 { // set is still s.listeners[group]: it is only replaced once deleted
			delete(s.listeners, group)
		}
		s.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-l.ch:
			if ctx.Err() != nil {
				return nil
			}
			wake()
		}
	}
}

// notifyLocked wakes every listener of group without blocking.
// The caller holds s.mu.
func (s *Store) notifyLocked(group string) {
	for l := range s.listeners[group] {
		select {
		case l.ch <- struct{}{}:
		default:
		}
	}
}
