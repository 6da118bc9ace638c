package claim

import (
	"sync"
	"sync/atomic"

	"github.com/easyjob-go/easyjob/repository"
)

// Set is the set of claims this node holds, one per task, and the epoch
// they were taken in. The epoch moves on each silence past the dead
// threshold: a claim of an older epoch is void (peers may have recovered
// its task) and never fires.
//
// Lock order: the gate, then the set's lock, then a claim's lock.
type Set struct {
	// gate orders claims against reconcile: a claimer holds it shared from
	// its claim (or renewing finish) statement until the set is updated;
	// reconcile holds it exclusively, so it never releases a row whose
	// claim is about to be held.
	gate sync.RWMutex

	mu    sync.Mutex
	held  map[repository.TaskID]*Claim
	epoch atomic.Int64
}

// NewSet returns an empty set in epoch 0.
func NewSet() *Set {
	return &Set{held: map[repository.TaskID]*Claim{}}
}

// Hold takes the gate shared, for a claim or renewing statement and the
// updating of the set with its results, and returns its release.
func (s *Set) Hold() (release func()) {
	s.gate.RLock()
	return s.gate.RUnlock
}

// Exclusive takes the gate alone (reconcile), and returns its release.
func (s *Set) Exclusive() (release func()) {
	s.gate.Lock()
	return s.gate.Unlock
}

// Epoch is the epoch new claims are taken in.
func (s *Set) Epoch() int64 { return s.epoch.Load() }

// VoidAll starts a new epoch: every claim held so far is void.
func (s *Set) VoidAll() { s.epoch.Add(1) }

// Keep holds c as its task's claim.
func (s *Set) Keep(c *Claim) {
	s.mu.Lock()
	s.held[c.Task.ID] = c
	s.mu.Unlock()
}

// Drop ends the given claims that have not begun their finish (Queued or
// Fired: they go to Dropped), forgets those still held and returns the
// fences of all of them, for a release (forget).
func (s *Set) Drop(cs ...*Claim) []repository.Claim {
	for _, c := range cs {
		c.mu.Lock()
		if st := c.current(); st == Queued || st == Fired {
			c.toLocked(Dropped)
		}
		c.mu.Unlock()
	}
	return s.forget(cs...)
}

// forget forgets the given claims (those still held) and returns their
// fences, for a release; their states are their finish's to set. A
// successor not yet confirmed, or void, is voided instead and has no
// fence to release: its row is its predecessor's, which that finish's
// settling releases or keeps.
func (s *Set) forget(cs ...*Claim) []repository.Claim {
	fences := make([]repository.Claim, 0, len(cs))
	s.mu.Lock()
	for _, c := range cs {
		switch {
		case s.held[c.Task.ID] == c:
			delete(s.held, c.Task.ID)
		case c.pred.Load() != nil || c.Void():
			c.mu.Lock()
			c.markVoidLocked()
			c.mu.Unlock()
			continue
		}
		fences = append(fences, c.Fence())
	}
	s.mu.Unlock()
	return fences
}

// validLocked reports whether c may fire: it is its task's claim, or the
// successor of the claim still held, taken in the current epoch and not
// void. The set's lock is held.
func (s *Set) validLocked(c *Claim) bool {
	if c.Epoch != s.epoch.Load() || c.Void() {
		return false
	}
	h := s.held[c.Task.ID]
	return h == c || (h != nil && c.pred.Load() == h)
}

// Fire splits cs into those that may fire (valid), moved to Fired in one
// step against a settling that voids them, and the others. It reuses
// cs's array for fired.
func (s *Set) Fire(cs []*Claim) (fired, not []*Claim) {
	fired = cs[:0]
	s.mu.Lock()
	defer s.mu.Unlock()
	epoch := s.epoch.Load()
	for _, c := range cs {
		h := s.held[c.Task.ID]
		mine := h == c || (h != nil && c.pred.Load() == h)
		c.mu.Lock()
		ok := mine && c.Epoch == epoch && !c.void.Load() && c.toLocked(Fired)
		c.mu.Unlock()
		if !ok {
			not = append(not, c)
			continue
		}
		fired = append(fired, c)
	}
	return fired, not
}

// Valid reports whether c may fire now (see Fire), without firing it.
func (s *Set) Valid(c *Claim) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.validLocked(c)
}

// Len is how many claims are held.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

// Held returns the claim held for task id, if any.
func (s *Set) Held(id repository.TaskID) (*Claim, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.held[id]
	return c, ok
}

// Strays returns the fences of rows claimed by this node in the database
// that it does not hold at that version.
func (s *Set) Strays(rows []repository.Task) []repository.Claim {
	var out []repository.Claim
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rows {
		if c, ok := s.held[r.ID]; ok && c.Task.Version == r.Version {
			continue
		}
		out = append(out, r.Claim())
	}
	return out
}
