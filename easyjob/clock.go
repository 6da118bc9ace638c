package easyjob

import (
	"sync"
	"time"
)

// clockOffset estimates (database time − local time) from round trips
// that returned the database's now(). It keeps the sample with the
// smallest round trip among the recent ones, since that one brackets the
// database's reading most tightly.
type clockOffset struct {
	mu      sync.Mutex
	samples [8]offsetSample
	n       int
	best    time.Duration
}

type offsetSample struct {
	offset, rtt time.Duration
}

// observe records one round trip: sent and received are local times
// around a call that read dbNow.
func (c *clockOffset) observe(sent, received, dbNow time.Time) {
	if dbNow.IsZero() {
		return
	}
	rtt := received.Sub(sent)
	mid := sent.Add(rtt / 2)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.samples[c.n%len(c.samples)] = offsetSample{offset: dbNow.Sub(mid), rtt: rtt}
	c.n++
	k := min(c.n, len(c.samples))
	best := c.samples[0]
	for _, s := range c.samples[1:k] {
		if s.rtt < best.rtt {
			best = s
		}
	}
	c.best = best.offset
}

// get returns the current estimate.
func (c *clockOffset) get() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.best
}
