package easyjob

import (
	"context"
	"testing"
	"time"
)

// waitSettled returns as soon as the last waiting claim leaves the queue,
// not before, and never later than its limit.
func TestPoolWaitSettled(t *testing.T) {
	p := newPool(&node{}, 1)
	a, b := &claimed{}, &claimed{}
	p.waiting = []*claimed{a, b}
	done := make(chan struct{})
	go func() {
		p.waitSettled(context.Background(), time.Minute)
		close(done)
	}()
	p.unwait(a)
	select {
	case <-done:
		t.Fatal("waitSettled returned while a claim still waited")
	case <-time.After(50 * time.Millisecond):
	}
	p.unwait(b)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("waitSettled not woken when the queue emptied")
	}

	p.waiting = []*claimed{a}
	t0 := time.Now()
	p.waitSettled(context.Background(), 30*time.Millisecond)
	if waited := time.Since(t0); waited < 30*time.Millisecond {
		t.Fatalf("waitSettled returned after %v with a claim waiting, before its 30ms limit", waited)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.waitSettled(ctx, time.Minute) // returns at once: the context is done
}
