package dispatch

import (
	"context"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/repository"
)

// waitSettled returns as soon as the last waiting claim leaves the queue,
// not before, and never later than its limit.
func TestPoolWaitSettled(t *testing.T) {
	p := NewPool(context.Background(), 1, func(context.Context, *claim.Claim) {})
	a, b := claim.New(repository.Task{}, testSpec, time.Time{}, 0), claim.New(repository.Task{}, testSpec, time.Time{}, 0)
	a.Wait(time.Now())
	b.Wait(time.Now())
	p.waiting = []*claim.Claim{a, b}
	done := make(chan struct{})
	go func() {
		p.WaitSettled(context.Background(), time.Minute)
		close(done)
	}()
	p.Expire(time.Unix(1, 0)) // nothing waited that long: both stay
	select {
	case <-done:
		t.Fatal("waitSettled returned while claims still waited")
	case <-time.After(50 * time.Millisecond):
	}
	p.DrainWaiting()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("waitSettled not woken when the queue emptied")
	}

	p.waiting = []*claim.Claim{a}
	t0 := time.Now()
	p.WaitSettled(context.Background(), 30*time.Millisecond)
	if waited := time.Since(t0); waited < 30*time.Millisecond {
		t.Fatalf("waitSettled returned after %v with a claim waiting, before its 30ms limit", waited)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.WaitSettled(ctx, time.Minute) // returns at once: the context is done
}

// A slot freed by done goes straight to the oldest waiting claim; a job
// whose start already failed is cancelled the moment it launches.
func TestPoolHandsSlotToOldestWaiter(t *testing.T) {
	ran := make(chan *claim.Claim, 3)
	p := NewPool(context.Background(), 1, func(ctx context.Context, c *claim.Claim) { ran <- c })
	a, b, c := claim.New(repository.Task{ID: 1}, testSpec, time.Time{}, 0), claim.New(repository.Task{ID: 2}, testSpec, time.Time{}, 0), claim.New(repository.Task{ID: 3}, testSpec, time.Time{}, 0)
	p.Submit(time.Now(), a)
	p.Submit(time.Now(), b)
	p.Submit(time.Now(), c)
	if got := <-ran; got != a {
		t.Fatalf("first run = task %d, want 1", got.Task.ID)
	}
	p.Done(a)
	if got := <-ran; got != b {
		t.Fatalf("second run = task %d, want 2 (FIFO)", got.Task.ID)
	}
	p.Done(b)
	if got := <-ran; got != c {
		t.Fatalf("third run = task %d, want 3", got.Task.ID)
	}
	p.Done(c)
	p.Wait()
	p.Close()
	p.WaitWorkers()
	if p.free != 1 || len(p.running) != 0 {
		t.Fatalf("after all done: free=%d running=%d, want 1 and 0", p.free, len(p.running))
	}
}

// A job launched while a worker idles runs on that worker: a burst of
// fires creates no goroutine per job (a new worker per job would leave
// the earlier ones idling). close makes idle workers exit.
func TestPoolReusesIdleWorkers(t *testing.T) {
	var p *Pool
	ran := make(chan *claim.Claim, 1)
	p = NewPool(context.Background(), 1, func(ctx context.Context, c *claim.Claim) {
		p.Done(c)
		ran <- c
	})
	waitIdle := func(n int32) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for p.idle.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("idle workers = %d, want %d", p.idle.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	const jobs = 20
	for i := range jobs {
		c := claim.New(repository.Task{ID: repository.TaskID(i + 1)}, testSpec, time.Time{}, 0)
		p.Submit(time.Now(), c)
		<-ran
		p.Wait()
		waitIdle(1)
	}
	// A worker counts itself idle just before it can take a job, so a
	// loaded machine may, rarely, start a second one; never one per job.
	if n := p.spawned.Load(); n > 3 {
		t.Fatalf("%d workers started for %d jobs one after another, want 1 (a few at most)", n, jobs)
	}
	p.Close()
	p.WaitWorkers()
	if got := p.idle.Load(); got != 0 {
		t.Fatalf("after close: %d workers idle, want 0", got)
	}
}

// expire gives up exactly the claims that began to wait before the
// cutoff, oldest first, and keeps the rest waiting in order.
func TestPoolExpireTakesTheOldest(t *testing.T) {
	p := NewPool(context.Background(), 0, func(context.Context, *claim.Claim) {})
	t0 := time.Now()
	cs := make([]*claim.Claim, 5)
	for i := range cs {
		cs[i] = claim.New(repository.Task{ID: repository.TaskID(i + 1)}, testSpec, time.Time{}, 0)
		p.Submit(t0.Add(time.Duration(i)*time.Second), cs[i]) // no free slot: all wait
	}
	if late := p.Expire(t0); len(late) != 0 {
		t.Fatalf("cutoff at the first wait: %d expired, want 0", len(late))
	}
	late := p.Expire(t0.Add(2500 * time.Millisecond))
	if len(late) != 3 || late[0] != cs[0] || late[1] != cs[1] || late[2] != cs[2] {
		t.Fatalf("expired %v, want the three oldest", late)
	}
	if got := p.DrainWaiting(); len(got) != 2 || got[0] != cs[3] || got[1] != cs[4] {
		t.Fatalf("still waiting %v, want the two newest in order", got)
	}
}
