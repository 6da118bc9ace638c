package easyjob

import (
	"context"
	"sync"
	"time"
)

// pool bounds concurrently running jobs to `size` slots. A started claim
// takes a free slot or waits, FIFO, for one; the boss gives up on those
// that wait too long so a peer can run the fire. A slot frees as soon as
// the job and its children return; the finish is written afterwards, off
// the slot.
type pool struct {
	n       *node
	mu      sync.Mutex
	free    int
	waiting []*claimed
	settled chan struct{}  // poked when the last waiting claim leaves the queue
	wg      sync.WaitGroup // job goroutines, until their finish is written
}

func newPool(n *node, size int) *pool {
	return &pool{n: n, free: size, settled: make(chan struct{}, 1)}
}

// pokeSettledLocked signals waitSettled once nothing waits for a worker.
func (p *pool) pokeSettledLocked() {
	if len(p.waiting) == 0 {
		select {
		case p.settled <- struct{}{}:
		default:
		}
	}
}

// waitSettled returns once no claim waits for a worker, or after limit.
func (p *pool) waitSettled(ctx context.Context, limit time.Duration) {
	if !p.hasWaiting() {
		return
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	for p.hasWaiting() {
		select {
		case <-p.settled:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// submit runs c on a free slot or queues it.
func (p *pool) submit(c *claimed) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == 0 {
		p.n.setState(c, stateWaiting, time.Now())
		p.waiting = append(p.waiting, c)
		return
	}
	p.free--
	p.launch(c)
}

// release frees one slot, passing it straight to the oldest waiting claim.
func (p *pool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.waiting) > 0 {
		c := p.waiting[0]
		p.waiting = p.waiting[1:]
		p.launch(c)
		p.pokeSettledLocked()
		return
	}
	p.free++
}

// launch runs c's job on its own goroutine, owned by the pool.
func (p *pool) launch(c *claimed) {
	ctx, cancel := context.WithCancel(p.n.runBase)
	p.n.mu.Lock()
	c.state, c.cancel = stateRunning, cancel
	p.n.mu.Unlock()
	p.wg.Go(func() {
		defer cancel()
		p.n.execute(ctx, c)
	})
}

// track runs f on a goroutine the pool waits for (finishing claims that
// never got a slot).
func (p *pool) track(f func()) { p.wg.Go(f) }

// expire removes and returns waiting claims that started waiting before cutoff.
func (p *pool) expire(cutoff time.Time) []*claimed {
	p.mu.Lock()
	defer p.mu.Unlock()
	var late []*claimed
	kept := p.waiting[:0]
	for _, c := range p.waiting {
		if p.n.waitingSince(c).Before(cutoff) {
			late = append(late, c)
		} else {
			kept = append(kept, c)
		}
	}
	p.waiting = kept
	p.pokeSettledLocked()
	return late
}

// unwait removes c from the waiting list if it is there.
func (p *pool) unwait(c *claimed) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, w := range p.waiting {
		if w == c {
			p.waiting = append(p.waiting[:i], p.waiting[i+1:]...)
			p.pokeSettledLocked()
			return
		}
	}
}

// drainWaiting removes and returns every waiting claim.
func (p *pool) drainWaiting() []*claimed {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.waiting
	p.waiting = nil
	p.pokeSettledLocked()
	return out
}

func (p *pool) hasWaiting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiting) > 0
}

// cancelAll cancels the context of every running job.
func (p *pool) cancelAll() {
	p.n.mu.Lock()
	defer p.n.mu.Unlock()
	for _, c := range p.n.held {
		if c.state == stateRunning && c.cancel != nil {
			c.cancel()
		}
	}
}

func (p *pool) wait() { p.wg.Wait() }

func (n *node) setState(c *claimed, s claimState, at time.Time) {
	n.mu.Lock()
	c.state, c.waitFrom = s, at
	n.mu.Unlock()
}

func (n *node) waitingSince(c *claimed) time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return c.waitFrom
}
