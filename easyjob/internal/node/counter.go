package node

import (
	"sync"
	"time"
)

// countWindow is the span of executions a node reports as its counts.
const countWindow = 10 * time.Second

// recentCounter counts events of the last countWindow complete seconds in
// one-second buckets. A node reports it as Node.Counts: least_count then
// balances the current load (a restarted node, counting from zero, does
// not take all the work to catch up with peers that ran for days). The
// second in progress is left out: counted half-way, it would make the
// counts of nodes doing the same work differ by the phase of their
// heartbeats.
type recentCounter struct {
	mu      sync.Mutex
	buckets [16]struct {
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
	cur := now.Unix()
	from := cur - int64(countWindow/time.Second)
	r.mu.Lock()
	defer r.mu.Unlock()
	var total int64
	for _, b := range r.buckets {
		if b.sec >= from && b.sec < cur {
			total += b.n
		}
	}
	return total
}
