package dashboard

import (
	"context"
	"sync"
	"time"
)

// cache keeps what a read returned for one refresh interval, so that any
// number of open pages (and a page opened twice) cost the database the
// queries of one. Concurrent reads of one key share one load. Errors are
// not kept.
type cache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
}

type entry struct {
	done chan struct{} // closed when the load returned
	at   time.Time
	val  any
	err  error
}

// maxEntries bounds the cache; expired entries go first when it is full.
const maxEntries = 512

// loadTimeout bounds one load: it runs detached from the request that
// started it, since other requests may be waiting for it too.
const loadTimeout = 15 * time.Second

// newCache keeps values a little less than refresh, so that a page
// refreshing every refresh interval gets a new read each time.
func newCache(refresh time.Duration) *cache {
	return &cache{ttl: refresh * 9 / 10, now: time.Now, entries: map[string]*entry{}}
}

// cached returns the value of key, loading it when it is missing or older
// than the cache's ttl.
func cached[T any](ctx context.Context, c *cache, key string, load func(ctx context.Context) (T, error)) (T, error) {
	c.mu.Lock()
	e := c.entries[key]
	if e != nil {
		select {
		case <-e.done:
			if c.now().Sub(e.at) >= c.ttl || e.err != nil {
				e = nil
			}
		default: // loading: wait for it
		}
	}
	if e == nil {
		e = &entry{done: make(chan struct{})}
		c.makeRoom()
		c.entries[key] = e
		go func() {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
			defer cancel()
			v, err := load(lctx)
			c.mu.Lock()
			e.val, e.err, e.at = v, err, c.now()
			if err != nil && c.entries[key] == e {
				delete(c.entries, key)
			}
			c.mu.Unlock()
			close(e.done)
		}()
	}
	c.mu.Unlock()
	var zero T
	select {
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-e.done:
	}
	if e.err != nil {
		return zero, e.err
	}
	return e.val.(T), nil
}

// makeRoom drops expired entries, then everything loaded, when the cache
// is full. The caller holds c.mu.
func (c *cache) makeRoom() {
	if len(c.entries) < maxEntries {
		return
	}
	for _, all := range []bool{false, true} {
		for k, e := range c.entries {
			select {
			case <-e.done:
				if all || c.now().Sub(e.at) >= c.ttl {
					delete(c.entries, k)
				}
			default:
			}
		}
		if len(c.entries) < maxEntries {
			return
		}
	}
}

// clear forgets every value, also those being loaded (their waiters
// still get them): an action changed the state.
func (c *cache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
}
