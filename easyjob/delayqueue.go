package easyjob

import (
	"container/heap"
	"sync"
	"time"
)

// delayQueue holds claim fires ordered by their local fire time. The
// boss waits on one timer for the earliest; there is no polling.
type delayQueue struct {
	mu      sync.Mutex
	h       claimHeap
	changed chan struct{} // poked when the earliest item may have changed
}

func newDelayQueue() *delayQueue {
	return &delayQueue{changed: make(chan struct{}, 1)}
}

func (q *delayQueue) push(c *claim) {
	q.mu.Lock()
	heap.Push(&q.h, c)
	first := q.h[0] == c
	q.mu.Unlock()
	if first {
		select {
		case q.changed <- struct{}{}:
		default:
		}
	}
}

// remove takes c out if it is still queued.
func (q *delayQueue) remove(c *claim) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if c.index < 0 || c.index >= len(q.h) || q.h[c.index] != c {
		return false
	}
	heap.Remove(&q.h, c.index)
	return true
}

// popDue removes and returns every item due at local time now, and the
// local time of the next item (zero when empty).
func (q *delayQueue) popDue(now time.Time) (due []*claim, next time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.h) > 0 && !q.h[0].localAt.After(now) {
		due = append(due, heap.Pop(&q.h).(*claim))
	}
	if len(q.h) > 0 {
		next = q.h[0].localAt
	}
	return due, next
}

// drain removes and returns everything.
func (q *delayQueue) drain() []*claim {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]*claim, len(q.h))
	for i, c := range q.h {
		c.index = -1
		out[i] = c
	}
	q.h = nil
	return out
}

func (q *delayQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.h)
}

type claimHeap []*claim

func (h claimHeap) Len() int { return len(h) }
func (h claimHeap) Less(i, j int) bool {
	if h[i].localAt.Equal(h[j].localAt) {
		return h[i].task.ID < h[j].task.ID
	}
	return h[i].localAt.Before(h[j].localAt)
}
func (h claimHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *claimHeap) Push(x any) {
	c := x.(*claim)
	c.index = len(*h)
	*h = append(*h, c)
}
func (h *claimHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	c.index = -1
	*h = old[:len(old)-1]
	return c
}
