package postgres

import "time"

// SetListenProbe sets s's LISTEN probe interval (listenProbe) for a test.
func SetListenProbe(s *Store, d time.Duration) { s.probe = d }
