package schedule

import "sync"

// Cache parses each (expression, zone) once. The rows of runtime
// schedules share a handful of crons, and a parse (a zone loaded, the
// expression checked) costs 10-20 µs: a burst of 20,000 fires would pay
// it on the CPU its jobs start on. The schedules a Cache returns share a
// tick memo, so the fires of one second compute their next fire once.
// It holds at most its size in entries and starts over when full. Safe for
// concurrent use.
type Cache struct {
	mu  sync.Mutex
	m   map[cacheKey]Schedule
	max int
}

type cacheKey struct{ expr, tz string }

// NewCache returns a Cache of at most size entries.
func NewCache(size int) *Cache { return &Cache{m: map[cacheKey]Schedule{}, max: size} }

// Parse is the package's Parse, remembered. Errors are not remembered.
func (c *Cache) Parse(expr, tz string) (Schedule, error) {
	k := cacheKey{expr, tz}
	c.mu.Lock()
	s, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := Parse(expr, tz)
	if err != nil {
		return s, err
	}
	if !s.Empty() && s.every == 0 && s.at.IsZero() {
		s.memo = &tickMemo{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[k]; ok {
		return prev, nil // parsed meanwhile: share its memo
	}
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = s
	return s, nil
}
