package memory

import "time"

// Option configures a Store.
type Option func(*Store)

// WithClock makes the store read time from now instead of time.Now, so
// tests can skew or drive the store's clock. A nil now is ignored.
func WithClock(now func() time.Time) Option {
	return func(s *Store) {
		if now != nil {
			s.clock = now
		}
	}
}
