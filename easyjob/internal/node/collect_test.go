package node

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// The boss looks at a burst lead before it and has it collected for once,
// only when it is large, near the next collection, and not found too
// late; it is told when to look again.
func TestBurstCollectorCheck(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	count := func(n int) func(time.Time) int {
		return func(got time.Time) int {
			if !got.Equal(at) {
				t.Fatalf("counted %v, want %v", got, at)
			}
			return n
		}
	}
	newB := func(near bool) *burstCollector {
		b := newBurstCollector(1000)
		b.near = func(int) bool { return near }
		return b
	}
	asked := func(b *burstCollector) bool {
		select {
		case <-b.plan:
			return true
		default:
			return false
		}
	}

	b := newB(true)
	if again := b.check(at.Add(-time.Second), at, count(5000)); !again.Equal(at.Add(-b.lead)) || asked(b) {
		t.Fatalf("a second ahead: again %v, want %v, and no collection", again, at.Add(-b.lead))
	}
	if again := b.check(at.Add(-b.lead), at, count(5000)); !again.IsZero() || !asked(b) {
		t.Fatalf("lead ahead: again %v, want none, and a collection", again)
	}
	if b.check(at.Add(-b.lead/2-time.Millisecond), at, count(5000)); asked(b) {
		t.Fatal("the same burst collected for twice")
	}
	for _, c := range []struct {
		name  string
		near  bool
		fires int
		ahead time.Duration
	}{
		{"a small burst", true, 999, 100 * time.Millisecond},
		{"a collection far off", false, 5000, 100 * time.Millisecond},
		{"found too late", true, 5000, 49 * time.Millisecond},
	} {
		b := newB(c.near)
		if b.check(at.Add(-c.ahead), at, count(c.fires)); asked(b) {
			t.Errorf("%s: collected", c.name)
		}
	}
	var off *burstCollector
	if again := off.check(at.Add(-time.Second), at, count(5000)); !again.IsZero() {
		t.Fatal("a nil collector asks to be woken")
	}
}

// run collects once per request and returns with its context.
func TestBurstCollectorRun(t *testing.T) {
	b := newBurstCollector(1000)
	var n atomic.Int64
	done := make(chan struct{}, 1)
	b.gc = func() { n.Add(1); done <- struct{}{} }
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() { b.run(ctx); close(stopped) }()
	b.plan <- struct{}{}
	<-done
	cancel()
	<-stopped
	if n.Load() != 1 {
		t.Fatalf("collected %d times, want 1", n.Load())
	}
}

// heapNear: a burst far larger than the heap's goal is near its
// collection.
func TestHeapNear(t *testing.T) {
	if !heapNear(1 << 30) {
		t.Fatal("a burst of a billion fires is not near the next collection")
	}
}
