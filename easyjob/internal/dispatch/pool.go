package dispatch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/repository"
)

// Pool bounds concurrently running jobs to `size` slots. A fired claim
// takes a free slot or waits, FIFO, for one; the boss gives up on those
// that wait too long so a peer can run the fire. A slot frees as soon as
// the job and its children return (Done); the finish is written
// afterwards, off the slot.
//
// Jobs run on worker goroutines that outlive them: a launched job goes to
// a worker idling since its last job, or to a new one when none idles.
// A burst of fires then costs no goroutine creation and no stack growth
// per job, and an idle worker exits after workerIdle.
type Pool struct {
	base context.Context                     // parent of job contexts: Run's values, no cancel
	exec func(context.Context, *claim.Claim) // runs one claim; calls done when its slot may go

	mu      sync.Mutex
	free    int
	waiting []*claim.Claim
	running []*claim.Claim // holding a slot; each claim's slot is its index here
	// detached are the jobs that go on without their claim or a slot
	// (Detach), with their cancels.
	detached map[*claim.Claim]context.CancelCauseFunc
	settled  chan struct{}  // poked when the last waiting claim leaves the queue
	jobs     sync.WaitGroup // jobs, and their finishes until written

	workers sync.WaitGroup
	idle    atomic.Int32  // workers waiting for a job
	spawned atomic.Int64  // workers started, ever
	handoff chan poolJob  // unbuffered: taken only by a worker idling right now
	quit    chan struct{} // closed by close: workers exit once idle
	closing sync.Once
}

// poolJob is a launched claim and its context.
type poolJob struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	c      *claim.Claim
}

// workerIdle is how long a worker without a job waits for the next one:
// longer than the gap between the bursts of every-second or every-minute
// crons, so they find their workers.
const workerIdle = 90 * time.Second

// NewPool returns a pool of size slots whose jobs run exec with a
// context derived from base.
func NewPool(base context.Context, size int, exec func(context.Context, *claim.Claim)) *Pool {
	return &Pool{
		base: base, exec: exec, free: size, settled: make(chan struct{}, 1),
		handoff: make(chan poolJob), quit: make(chan struct{}),
	}
}

// Submit runs each of cs on a free slot, or queues it, in order, as of
// local time now.
func (p *Pool) Submit(now time.Time, cs ...*claim.Claim) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		if p.free == 0 {
			c.Wait(now)
			p.waiting = append(p.waiting, c)
			continue
		}
		p.free--
		p.launchLocked(c)
	}
}

// Done frees c's slot before its job's goroutine is through with it (a
// job about to wait on a write), passing the slot straight to the oldest
// waiting claim on another worker. Freeing twice is a no-op: the worker
// frees whatever its job left held when it returns.
func (p *Pool) Done(c *claim.Claim) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if next, ok := p.freeLocked(c); ok {
		p.handLocked(next)
	}
}

// freeLocked frees c's slot if c still holds it: to the oldest waiting
// claim, whose job it returns ready to run, or back to the pool.
func (p *Pool) freeLocked(c *claim.Claim) (poolJob, bool) {
	if !p.holdsLocked(c) {
		return poolJob{}, false
	}
	// Swap-remove: no map to hash into per fire.
	last := p.running[len(p.running)-1]
	p.running[c.Slot], last.Slot = last, c.Slot
	p.running[len(p.running)-1] = nil
	p.running = p.running[:len(p.running)-1]
	if len(p.waiting) == 0 {
		p.free++
		return poolJob{}, false
	}
	next := p.waiting[0]
	p.waiting = p.waiting[1:]
	p.pokeSettledLocked()
	return p.startLocked(next), true
}

// holdsLocked reports whether c's job holds a slot.
func (p *Pool) holdsLocked(c *claim.Claim) bool {
	return c.Slot < len(p.running) && p.running[c.Slot] == c
}

// launchLocked runs c's job on an idle worker, or on a new one.
func (p *Pool) launchLocked(c *claim.Claim) { p.handLocked(p.startLocked(c)) }

// startLocked makes c running: its context, and its count in jobs.
func (p *Pool) startLocked(c *claim.Claim) poolJob {
	ctx, cancel := context.WithCancelCause(p.base)
	c.Run(cancel)
	c.Slot = len(p.running)
	p.running = append(p.running, c)
	p.jobs.Add(1)
	return poolJob{ctx: ctx, cancel: cancel, c: c}
}

// handLocked gives j to an idle worker, or to a new one.
func (p *Pool) handLocked(j poolJob) {
	select {
	case p.handoff <- j:
	default:
		p.spawned.Add(1)
		p.workers.Go(func() { p.work(j) })
	}
}

// work runs j, then the jobs waiting for a slot, then those handed to it,
// until it idles workerIdle or the pool closes. A worker whose job
// returns holding its slot runs the oldest waiting claim itself: in a
// burst, one hand-off to a parked goroutine per fire cost more than the
// fire's own work (BenchmarkPoolBurst).
func (p *Pool) work(j poolJob) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		p.exec(j.ctx, j.c)
		p.mu.Lock()
		next, ok := p.freeLocked(j.c) // before Done: jobs must not touch zero between the two
		p.mu.Unlock()
		j.cancel(nil)
		p.jobs.Done()
		if ok {
			j = next
			continue
		}
		if !p.next(idle, &j) {
			return
		}
	}
}

// next waits, idle, for the next job handed to this worker; false when
// the worker should exit.
func (p *Pool) next(idle *time.Timer, j *poolJob) bool {
	p.idle.Add(1)
	defer p.idle.Add(-1)
	idle.Reset(workerIdle)
	select {
	case *j = <-p.handoff:
		return true
	case <-idle.C:
		return false
	case <-p.quit:
		return false
	}
}

// Close makes idle workers exit, and the others once their job returns.
func (p *Pool) Close() { p.closing.Do(func() { close(p.quit) }) }

// WaitWorkers returns once every worker has exited (after close, and only
// once no job runs: a job that ignores its context keeps its worker).
func (p *Pool) WaitWorkers() { p.workers.Wait() }

// Track runs f on a goroutine the pool waits for (finishing claims that
// never got a slot).
func (p *Pool) Track(f func()) { p.jobs.Go(f) }

// Pending counts one finish in flight until finished is called: the
// pool's wait covers jobs and the writes of their results.
func (p *Pool) Pending() { p.jobs.Add(1) }

// Finished ends one pending.
func (p *Pool) Finished() { p.jobs.Done() }

// Expire removes and returns waiting claims that began to wait before
// cutoff. They wait in the order they began to (submit appends, as of
// the boss's clock), so only the head is read: the boss calls this after
// every pass, and a scan of a burst's thousands of waiting claims held
// the pool's lock while the workers waited for it.
func (p *Pool) Expire(cutoff time.Time) []*claim.Claim {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := 0
	for k < len(p.waiting) && p.waiting[k].WaitingSince().Before(cutoff) {
		k++
	}
	if k == 0 {
		return nil
	}
	late := append([]*claim.Claim(nil), p.waiting[:k]...)
	clear(p.waiting[:k])
	p.waiting = p.waiting[k:]
	p.pokeSettledLocked()
	return late
}

// DrainWaiting removes and returns every waiting claim.
func (p *Pool) DrainWaiting() []*claim.Claim {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.waiting
	p.waiting = nil
	p.pokeSettledLocked()
	return out
}

// HasWaiting reports that a fired claim waits for a slot.
func (p *Pool) HasWaiting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiting) > 0
}

// pokeSettledLocked signals waitSettled once nothing waits for a worker.
func (p *Pool) pokeSettledLocked() {
	if len(p.waiting) == 0 {
		select {
		case p.settled <- struct{}{}:
		default:
		}
	}
}

// WaitSettled returns once no claim waits for a worker, or after limit.
func (p *Pool) WaitSettled(ctx context.Context, limit time.Duration) {
	if !p.HasWaiting() {
		return
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	for p.HasWaiting() {
		select {
		case <-p.settled:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Runs reports whether a job of task id runs (abandoned after the
// shutdown grace, say).
func (p *Pool) Runs(id repository.TaskID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.running {
		if c.Task.ID == id {
			return true
		}
	}
	return false
}

// Busy returns how many jobs run, detached ones included.
func (p *Pool) Busy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.running) + len(p.detached)
}

// Holds reports whether c's job runs: it holds a slot, or it went on
// detached.
func (p *Pool) Holds(c *claim.Claim) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, detached := p.detached[c]
	return detached || p.holdsLocked(c)
}

// StopIf cancels, with cause, the context of every running job (detached
// ones too) whose claim satisfies match, and returns those claims.
func (p *Pool) StopIf(match func(*claim.Claim) bool, cause error) []*claim.Claim {
	p.mu.Lock()
	var hit []*claim.Claim
	var cancels []context.CancelCauseFunc
	for _, c := range p.running {
		if match(c) {
			hit, cancels = append(hit, c), append(cancels, c.StopWith)
		}
	}
	for c, cancel := range p.detached {
		if match(c) {
			hit, cancels = append(hit, c), append(cancels, cancel)
		}
	}
	p.mu.Unlock()
	for _, cancel := range cancels {
		cancel(cause)
	}
	return hit
}

// Detach runs job on a goroutine of its own, apart from the slots: the
// run of fire c that goes on after c's worker returned (an
// OverlapAllowAll task's). Its context is cancelled by CancelAll, StopIf
// and the returned cancel; Wait waits for it.
func (p *Pool) Detach(c *claim.Claim, job func(ctx context.Context)) context.CancelCauseFunc {
	ctx, cancel := context.WithCancelCause(p.base)
	p.mu.Lock()
	if p.detached == nil {
		p.detached = make(map[*claim.Claim]context.CancelCauseFunc)
	}
	p.detached[c] = cancel
	p.mu.Unlock()
	p.jobs.Go(func() {
		defer func() {
			p.mu.Lock()
			delete(p.detached, c)
			p.mu.Unlock()
			cancel(nil)
		}()
		job(ctx)
	})
	return cancel
}

// DetachedOf counts the detached jobs of task id.
func (p *Pool) DetachedOf(id repository.TaskID) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := 0
	for c := range p.detached {
		if c.Task.ID == id {
			k++
		}
	}
	return k
}

// CancelAll cancels the context of every running job, detached ones
// included.
func (p *Pool) CancelAll() { p.CancelAllCause(nil) }

// CancelAllCause is CancelAll with cause as context.Cause reports it.
func (p *Pool) CancelAllCause(cause error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.running {
		c.StopWith(cause)
	}
	for _, cancel := range p.detached {
		cancel(cause)
	}
}

// Wait returns once every job has returned and its finish is written.
func (p *Pool) Wait() { p.jobs.Wait() }
