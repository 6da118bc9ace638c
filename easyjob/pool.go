package easyjob

import (
	"sync"
	"time"
)

// pool runs claims on at most `size` goroutines at once. Claims beyond
// that wait in FIFO order; the boss releases those that wait too long.
type pool struct {
	n       *node
	mu      sync.Mutex
	free    int
	waiting []*claimed
	wg      sync.WaitGroup
}

func newPool(n *node, size int) *pool { return &pool{n: n, free: size} }

func (p *pool) submit(c *claimed) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == 0 {
		p.n.setState(c, stateWaiting, time.Now())
		p.waiting = append(p.waiting, c)
		return
	}
	p.free--
	p.wg.Go(func() { p.work(c) })
}

// work runs c, then whatever waits, until nothing does.
func (p *pool) work(c *claimed) {
	for c != nil {
		p.n.execute(c)
		p.mu.Lock()
		c = nil
		if len(p.waiting) > 0 {
			c, p.waiting = p.waiting[0], p.waiting[1:]
		} else {
			p.free++
		}
		p.mu.Unlock()
	}
}

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
	return late
}

// unwait removes c from the waiting list if it is there.
func (p *pool) unwait(c *claimed) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, w := range p.waiting {
		if w == c {
			p.waiting = append(p.waiting[:i], p.waiting[i+1:]...)
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
