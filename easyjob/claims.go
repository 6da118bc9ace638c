package easyjob

import (
	"sync"
	"sync/atomic"

	"github.com/easyjob-go/easyjob/repository"
)

// claimSet is the set of claims this node holds, one per task, and the
// epoch they were taken in. The epoch moves on each silence past the dead
// threshold: a claim of an older epoch is void (peers may have recovered
// its task) and never fires.
type claimSet struct {
	// gate orders claims against reconcile: a claimer holds it shared from
	// its claim (or renewing finish) statement until the set is updated;
	// reconcile holds it exclusively, so it never releases a row whose
	// claim is about to be held.
	gate sync.RWMutex

	mu    sync.Mutex
	held  map[repository.TaskID]*claim
	epoch atomic.Int64
}

func newClaimSet() *claimSet {
	return &claimSet{held: map[repository.TaskID]*claim{}}
}

// hold takes the gate shared, for a renewing write and the settling of
// its results, and returns its release.
func (s *claimSet) hold() (release func()) {
	s.gate.RLock()
	return s.gate.RUnlock
}

// currentEpoch is the epoch new claims are taken in.
func (s *claimSet) currentEpoch() int64 { return s.epoch.Load() }

// void starts a new epoch: every claim held so far is void.
func (s *claimSet) void() { s.epoch.Add(1) }

// add holds c as its task's claim.
func (s *claimSet) add(c *claim) {
	s.mu.Lock()
	s.held[c.task.ID] = c
	s.mu.Unlock()
}

// drop forgets the given claims (those still held) and returns the fences
// of all of them, for a release. A successor not yet confirmed, or void,
// is voided instead and has no fence to release: its row is its
// predecessor's, which that finish's settling releases or keeps.
func (s *claimSet) drop(cs ...*claim) []repository.Claim {
	fences := make([]repository.Claim, 0, len(cs))
	s.mu.Lock()
	for _, c := range cs {
		switch {
		case s.held[c.task.ID] == c:
			delete(s.held, c.task.ID)
		case c.void.Load() || c.pred.Load() != nil:
			c.void.Store(true)
			continue
		}
		fences = append(fences, c.fence())
	}
	s.mu.Unlock()
	return fences
}

// validLocked reports whether c may fire: it is its task's claim, or the
// successor of the claim still held, taken in the current epoch and not
// void. The set's lock is held.
func (s *claimSet) validLocked(c *claim) bool {
	if c.epoch != s.epoch.Load() || c.void.Load() {
		return false
	}
	h := s.held[c.task.ID]
	return h == c || (h != nil && c.pred.Load() == h)
}

// fire splits cs into those that may fire (valid), marked fired in one
// step against a settling that voids them, and the others. It reuses
// cs's array for fired.
func (s *claimSet) fire(cs []*claim) (fired, not []*claim) {
	fired = cs[:0]
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		if !s.validLocked(c) {
			not = append(not, c)
			continue
		}
		c.shot.Store(true)
		fired = append(fired, c)
	}
	return fired, not
}

// voidClaim makes c void (it will not fire) and reports whether it had
// fired already.
func (s *claimSet) voidClaim(c *claim) (fired bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.void.Store(true)
	return c.shot.Load()
}

// renew replaces c by next, the claim a finish kept for the task's next
// fire, when c is still held, next is not void and keep (called under the
// set's lock) agrees; otherwise it forgets c. It reports whether next is
// held.
func (s *claimSet) renew(c, next *claim, keep func() bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[c.task.ID] != c {
		return false
	}
	if !next.void.Load() && keep() {
		s.held[c.task.ID] = next
		return true
	}
	delete(s.held, c.task.ID)
	return false
}

func (s *claimSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

// strays returns the fences of rows claimed by this node in the database
// that it does not hold at that version.
func (s *claimSet) strays(rows []repository.Task) []repository.Claim {
	var out []repository.Claim
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rows {
		if c, ok := s.held[r.ID]; ok && c.task.Version == r.Version {
			continue
		}
		out = append(out, r.Claim())
	}
	return out
}
