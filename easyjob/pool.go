package easyjob

import (
	"context"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// pool bounds concurrently running jobs to `size` slots. A fired claim
// takes a free slot or waits, FIFO, for one; the boss gives up on those
// that wait too long so a peer can run the fire. A slot frees as soon as
// the job and its children return (done); the finish is written
// afterwards, off the slot.
type pool struct {
	base context.Context               // parent of job contexts: Run's values, no cancel
	exec func(context.Context, *claim) // runs one claim; calls done when its slot may go

	mu      sync.Mutex
	free    int
	waiting []*claim
	running map[*claim]struct{}
	settled chan struct{}  // poked when the last waiting claim leaves the queue
	wg      sync.WaitGroup // job goroutines, and their finishes until written
}

func newPool(base context.Context, size int, exec func(context.Context, *claim)) *pool {
	return &pool{base: base, exec: exec, free: size, running: map[*claim]struct{}{}, settled: make(chan struct{}, 1)}
}

// submit runs c on a free slot or queues it.
func (p *pool) submit(c *claim) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == 0 {
		c.wait(time.Now())
		p.waiting = append(p.waiting, c)
		return
	}
	p.free--
	p.launchLocked(c)
}

// done frees c's slot, passing it straight to the oldest waiting claim.
func (p *pool) done(c *claim) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, c)
	if len(p.waiting) > 0 {
		next := p.waiting[0]
		p.waiting = p.waiting[1:]
		p.launchLocked(next)
		p.pokeSettledLocked()
		return
	}
	p.free++
}

// launchLocked runs c's job on its own goroutine, owned by the pool.
func (p *pool) launchLocked(c *claim) {
	ctx, cancel := context.WithCancel(p.base)
	c.run(cancel)
	p.running[c] = struct{}{}
	p.wg.Go(func() {
		defer cancel()
		p.exec(ctx, c)
	})
}

// track runs f on a goroutine the pool waits for (finishing claims that
// never got a slot).
func (p *pool) track(f func()) { p.wg.Go(f) }

// pending counts one finish in flight until the returned done is called:
// the pool's wait covers jobs and the writes of their results.
func (p *pool) pending() (done func()) {
	p.wg.Add(1)
	return p.wg.Done
}

// expire removes and returns waiting claims that began to wait before cutoff.
func (p *pool) expire(cutoff time.Time) []*claim {
	p.mu.Lock()
	defer p.mu.Unlock()
	var late []*claim
	kept := p.waiting[:0]
	for _, c := range p.waiting {
		if c.waitingSince().Before(cutoff) {
			late = append(late, c)
		} else {
			kept = append(kept, c)
		}
	}
	p.waiting = kept
	p.pokeSettledLocked()
	return late
}

// drainWaiting removes and returns every waiting claim.
func (p *pool) drainWaiting() []*claim {
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

// runs reports whether a job of task id runs (abandoned after the
// shutdown grace, say).
func (p *pool) runs(id repository.TaskID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.running {
		if c.task.ID == id {
			return true
		}
	}
	return false
}

// busy returns how many jobs run.
func (p *pool) busy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.running)
}

// cancelAll cancels the context of every running job.
func (p *pool) cancelAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.running {
		c.stop()
	}
}

// wait returns once every job goroutine has returned.
func (p *pool) wait() { p.wg.Wait() }
