package node

import (
	"sync"
	"time"
)

// clockOffset estimates (database time − local time) from round trips
// that returned the database's now(). now() is read somewhere between
// sending and receiving, so each round trip bounds the offset to
// [dbNow − received, dbNow − sent]. The estimate intersects the bounds of
// the recent round trips, newest first, and takes the point of the
// intersection closest to zero: clocks are usually synchronised, and on
// one host the offset is exactly zero, where a midpoint would be skewed
// by the time the statement spent after reading now() (a commit's flush).
// A round trip whose bounds exclude every older one's (a clock step)
// starts the intersection afresh.
type clockOffset struct {
	mu      sync.Mutex
	samples [16]offsetBounds
	n       int
	best    time.Duration
	stepped time.Time // local time the last step of the database's clock was seen
}

// minClockStep is the smallest move of the estimate counted as a step of
// the database's clock (a failover to a standby whose clock differs, an
// NTP step): smaller ones cannot make a live peer look dead.
const minClockStep = 250 * time.Millisecond

type offsetBounds struct{ lo, hi time.Duration }

// observe records one round trip: sent and received are local times
// around a call that read dbNow.
func (c *clockOffset) observe(sent, received, dbNow time.Time) {
	if dbNow.IsZero() || received.Before(sent) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.samples[c.n%len(c.samples)] = offsetBounds{lo: dbNow.Sub(received), hi: dbNow.Sub(sent)}
	c.n++
	k := min(c.n, len(c.samples))
	cur := c.samples[(c.n-1)%len(c.samples)]
	for i := 2; i <= k; i++ {
		s := c.samples[(c.n-i)%len(c.samples)]
		lo, hi := max(cur.lo, s.lo), min(cur.hi, s.hi)
		if lo > hi {
			break // older than a clock step: ignore the rest
		}
		cur = offsetBounds{lo, hi}
	}
	best := min(max(0, cur.lo), cur.hi)
	if c.n > 1 && (best-c.best > minClockStep || c.best-best > minClockStep) {
		c.stepped = received
	}
	c.best = best
}

// steppedWithin reports whether the database's clock was seen to step
// within d before now (local): heartbeats written before the step are
// then measured against the new clock, and peers look older than they
// are until each has beaten again.
func (c *clockOffset) steppedWithin(d time.Duration, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.stepped.IsZero() && now.Sub(c.stepped) < d
}

// get returns the current estimate.
func (c *clockOffset) get() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.best
}

// monoBase anchors mono. It is set once and never changes.
var monoBase = time.Now()

// mono reads the monotonic clock alone, as time since monoBase: half the
// cost of time.Now, which reads the wall clock too. The firing path reads
// the time a few times per fire, in a burst of thousands.
func mono() time.Duration { return time.Since(monoBase) }

// monoAt is local time t on mono's scale.
func monoAt(t time.Time) time.Duration { return t.Sub(monoBase) }
