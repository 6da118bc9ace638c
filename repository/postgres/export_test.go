package postgres

import "time"

// SetListenProbe sets s's LISTEN probe interval (listenProbe) for a test.
func SetListenProbe(s *Store, d time.Duration) { s.probe = d }

// SetPruneIDs sets the largest group whose task ids s's prune by age
// sends (< 0: none, so it always filters by subquery).
func SetPruneIDs(s *Store, n int) { s.pruneIDs = n }
