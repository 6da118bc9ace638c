package claim

import "fmt"

// State is where a claim is in its life on this node. One claim is one
// fire of one task: a claim statement (or a finish that kept the claim)
// makes it, and its finish (or a drop) ends it. The next fire of a kept
// claim is a new Claim.
//
// The legal transitions, and who makes them:
//
//	from \ to   Fired   Finishing   Kept   Released   Fenced   Dropped
//	Queued      boss    ·           ·      ·          ·        boss, drop, void, shutdown
//	Fired       ·       worker      ·      ·          ·        worker (silence, start not recorded)
//	Finishing   ·       ·           settle settle     settle   settle (write failed, stopping)
//	Kept, Released, Fenced, Dropped: final; no transition leaves them.
//
// Queued: claimed, in the delay queue until its fire time (a child of a
// chain is claimed by its parent's worker and fires at once). Fired: the
// boss took it; it waits for a worker slot or its job runs. Finishing:
// its finish is handed to the completer. Kept: the written finish kept
// the claim for the next fire (a new Claim holds it). Released: the
// finish gave the row back (pending, paused, finished, handed to a peer).
// Fenced: the write found the claim lost (a peer recovered the task).
// Dropped: forgotten without a finish of its own (a silence, shutdown,
// a start record that failed); reconcile releases the row if it is
// still this node's.
//
// Beside its state, a successor (a claim queued before the finish that
// makes it is written, successor.go) is confirmed or void: a void claim
// never fires, and if it fired already, its job is cancelled and its
// finish carries a fence no row matches (Fenced).
type State uint8

// The states; see State.
const (
	Queued State = iota
	Fired
	Finishing
	Kept
	Released
	Fenced
	Dropped
	numStates
)

var stateNames = [numStates]string{"queued", "fired", "finishing", "kept", "released", "fenced", "dropped"}

func (s State) String() string {
	if s < numStates {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Final reports a state no transition leaves.
func (s State) Final() bool { return s >= Kept && s < numStates }

// legal is the table of State's doc comment: legal[from] is the set of
// states reachable in one step, as bits.
var legal = [numStates]uint8{
	Queued:    bit(Fired) | bit(Dropped),
	Fired:     bit(Finishing) | bit(Dropped),
	Finishing: bit(Kept) | bit(Released) | bit(Fenced) | bit(Dropped),
}

func bit(s State) uint8 { return 1 << s }

// Legal reports whether a claim may go from one state to the other.
func Legal(from, to State) bool {
	return from < numStates && to < numStates && legal[from]&bit(to) != 0
}

// State returns the claim's state.
func (c *Claim) State() State { return c.current() }

// current reads the state without the lock (it changes only under it).
func (c *Claim) current() State { return State(c.state.Load()) }

// To moves the claim to state to if the table of State allows it from
// where it is, and reports whether it did.
func (c *Claim) To(to State) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.toLocked(to)
}

func (c *Claim) toLocked(to State) bool {
	if !Legal(c.current(), to) {
		return false
	}
	c.state.Store(uint32(to))
	return true
}

// AfterSettle runs fn once c's finish is settled, and reports true; it
// reports false and does nothing when it already is.
func (c *Claim) AfterSettle(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current().Final() {
		return false
	}
	c.waiters = append(c.waiters, fn)
	return true
}

// Settle ends a Finishing claim in the final state to (Kept, Released,
// Fenced or Dropped) and runs what waited for that. It reports false,
// and does nothing, when the claim was not Finishing.
func (c *Claim) Settle(to State) bool {
	c.mu.Lock()
	if c.current() != Finishing || !to.Final() || !c.toLocked(to) {
		c.mu.Unlock()
		return false
	}
	ws := c.waiters
	c.waiters = nil
	next := c.next
	c.next = nil
	c.mu.Unlock()
	if next != nil {
		next.pred.Store(nil) // no chain of claims kept alive through pred
	}
	for _, w := range ws {
		w()
	}
	return true
}

// HasFired reports that the boss took the claim: its job ran or runs.
func (c *Claim) HasFired() bool { return c.current() != Queued }

// markVoidLocked makes c void: it will not fire, and its writes carry a
// fence no row matches. It reports whether c had fired already. c's lock
// is held.
func (c *Claim) markVoidLocked() (fired bool) {
	c.void.Store(true)
	return c.HasFired()
}
