package easyjob

import (
	"sync"
	"time"
)

// countWindow is the span of executions a node reports as its counts.
const countWindow = time.Minute

// recentCounter counts events over the last countWindow in one-second
// buckets. A node reports it as Node.Counts: least_count then balances the
// current load, and a restarted node (counting from zero) does not take
// all the work until it has caught up with peers that ran for days.
type recentCounter struct {
	mu      sync.Mutex
	buckets [60]struct {
		sec int64
		n   int64
	}
}

func (r *recentCounter) add(now time.Time) {
	sec := now.Unix()
	r.mu.Lock()
	defer r.mu.Unlock()
	b := &r.buckets[sec%int64(len(r.buckets))]
	if b.sec != sec {
		b.sec, b.n = sec, 0
	}
	b.n++
}

func (r *recentCounter) sum(now time.Time) int64 {
	from := now.Add(-countWindow).Unix()
	r.mu.Lock()
	defer r.mu.Unlock()
	var total int64
	for _, b := range r.buckets {
		if b.sec > from {
			total += b.n
		}
	}
	return total
}
