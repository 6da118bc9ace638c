package easyjob

import (
	"sync"
	"testing"
	"time"
)

var clockT0 = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// clockSample feeds one round trip sent at clockT0+at, lasting rtt, whose
// database reading is offset ahead of the local midpoint.
func clockSample(c *clockOffset, at, rtt, offset time.Duration) {
	sent := clockT0.Add(at)
	received := sent.Add(rtt)
	c.observe(sent, received, sent.Add(rtt/2).Add(offset))
}

func TestClockOffsetMinRTT(t *testing.T) {
	var c clockOffset
	if got := c.get(); got != 0 {
		t.Fatalf("initial offset %v", got)
	}
	clockSample(&c, 0, 100*time.Millisecond, time.Second)
	if got := c.get(); got != time.Second {
		t.Fatalf("one sample: %v", got)
	}
	clockSample(&c, time.Second, 10*time.Millisecond, 2*time.Second) // tighter: wins
	if got := c.get(); got != 2*time.Second {
		t.Fatalf("tighter sample: %v, want 2s", got)
	}
	clockSample(&c, 2*time.Second, 50*time.Millisecond, 3*time.Second) // looser: ignored
	if got := c.get(); got != 2*time.Second {
		t.Fatalf("looser sample: %v, want 2s", got)
	}
	// Negative offsets (database behind) work the same.
	clockSample(&c, 3*time.Second, 5*time.Millisecond, -700*time.Millisecond)
	if got := c.get(); got != -700*time.Millisecond {
		t.Fatalf("negative offset: %v", got)
	}
	// A zero database time (no reading) is ignored.
	c.observe(clockT0, clockT0.Add(time.Millisecond), time.Time{})
	if got := c.get(); got != -700*time.Millisecond {
		t.Fatalf("zero reading changed the offset to %v", got)
	}
}

// TestClockOffsetWindow: only recent samples count, so a once-tight sample
// ages out and a drifting clock is followed.
func TestClockOffsetWindow(t *testing.T) {
	var c clockOffset
	clockSample(&c, 0, time.Millisecond, 5*time.Second) // very tight, old
	for i := range len(c.samples) - 1 {
		clockSample(&c, time.Duration(i+1)*time.Second, 20*time.Millisecond, time.Duration(i+1)*time.Millisecond)
	}
	if got := c.get(); got != 5*time.Second {
		t.Fatalf("within the window the tight sample wins: %v", got)
	}
	// One more sample pushes the tight one out; the best of the rest wins.
	clockSample(&c, 100*time.Second, 30*time.Millisecond, time.Hour)
	if got := c.get(); got != time.Millisecond {
		t.Fatalf("after the tight sample aged out: %v, want 1ms (the oldest of the equal-RTT samples)", got)
	}
	// Equal RTTs: the estimate stays put rather than jumping between them.
	for i := range 3 * len(c.samples) {
		clockSample(&c, time.Duration(200+i)*time.Second, 10*time.Millisecond, 42*time.Millisecond)
	}
	if got := c.get(); got != 42*time.Millisecond {
		t.Fatalf("steady samples: %v", got)
	}
}

func TestClockOffsetMidpoint(t *testing.T) {
	var c clockOffset
	// Database reading exactly at the local send time with a 200ms trip:
	// the estimate assumes the reading was taken mid-trip, so -100ms.
	c.observe(clockT0, clockT0.Add(200*time.Millisecond), clockT0)
	if got := c.get(); got != -100*time.Millisecond {
		t.Fatalf("midpoint: %v", got)
	}
}

func TestClockOffsetConcurrent(t *testing.T) {
	var c clockOffset
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				clockSample(&c, time.Duration(i)*time.Millisecond, time.Duration(g+1)*time.Millisecond, time.Duration(g)*time.Second)
				_ = c.get()
			}
		})
	}
	wg.Wait()
	if got := c.get(); got < 0 || got > 7*time.Second || got%time.Second != 0 {
		t.Fatalf("offset %v is not one of the observed offsets", got)
	}
}
