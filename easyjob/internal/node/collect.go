package node

import (
	"context"
	"runtime"
	"runtime/metrics"
	"time"
)

// burstCollector collects garbage shortly before a large burst of fires,
// while the node is idle, so that no collection starts inside it. A node
// firing thousands of claims in one instant allocates some megabytes in a
// few tens of milliseconds (job contexts, run records, finishes); with a
// small live heap that is enough to reach the next collection, whose
// mark phase then takes a core and slows every allocation while the
// burst's last fires are still waiting to start (issue 25: a node's p99
// start lag 100–200 ms in such a burst against 50–80 ms without).
// Collected just before, the burst starts with the heap at its live size
// and a whole heap's growth of room.
//
// It collects only when the burst's allocations would start a
// collection anyway (near): a process with a large heap, whose next
// collection is far, is left alone. A smaller burst (under min fires), or
// one found too late (under lead ahead), gets none either.
type burstCollector struct {
	min  int                  // fires in one instant that make a burst worth it
	lead time.Duration        // how long before the burst the collection starts
	near func(fires int) bool // whether a burst of fires would reach the next collection (heapNear)
	gc   func()               // runtime.GC; counters in tests

	checked time.Time     // the fire time last checked (the boss's alone)
	plan    chan struct{} // a collection asked for by check
}

// Defaults of burstCollector: a collection takes a few milliseconds of a
// node's cores for a heap of tens of megabytes; 1 000 fires allocate
// a few megabytes.
const (
	burstCollectMin  = 1000
	burstCollectLead = 100 * time.Millisecond
)

func newBurstCollector(minFires int) *burstCollector {
	return &burstCollector{min: minFires, lead: burstCollectLead, near: heapNear, gc: runtime.GC, plan: make(chan struct{}, 1)}
}

// check is the boss's look at the earliest queued fire time next, at
// local time now: lead before next it counts next's claims (count) and,
// for a burst, has the collector collect. It returns when the boss should
// look again (zero: no need); the boss's timer wakes it then.
func (b *burstCollector) check(now, next time.Time, count func(time.Time) int) (again time.Time) {
	if b == nil || b.min <= 0 || next.IsZero() || next.Equal(b.checked) {
		return time.Time{}
	}
	if at := next.Add(-b.lead); now.Before(at) {
		return at
	}
	b.checked = next
	// Found too late, the collection would take the burst's cores: only
	// one that has time to end before the burst.
	if fires := count(next); next.Sub(now) >= b.lead/2 && fires >= b.min && b.near(fires) {
		select {
		case b.plan <- struct{}{}:
		default: // one is pending already
		}
	}
	return time.Time{}
}

// burstBytesPerFire is about what a fire allocates as its job starts
// (its context, run record, log, finish: 2–3 KiB measured), doubled: a
// collection starts before the heap reaches its goal.
const burstBytesPerFire = 6 << 10

// heapNear reports whether a burst of fires would take the heap to its
// goal, so that a collection would start inside it.
func heapNear(fires int) bool {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return false
	}
	goal, heap := s[0].Value.Uint64(), s[1].Value.Uint64()
	return heap+uint64(fires)*burstBytesPerFire >= goal
}

// run collects when check asks, until ctx is done.
func (b *burstCollector) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.plan:
			b.gc()
		}
	}
}
