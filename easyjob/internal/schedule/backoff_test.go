package schedule

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestBackoffBounds(t *testing.T) {
	const samples = 300
	for _, c := range []struct{ base, max time.Duration }{
		{100 * time.Millisecond, 2 * time.Second},
		{time.Second, 10 * time.Minute},
		{6 * time.Millisecond, 5 * time.Second},
		{3 * time.Second, time.Second}, // base above the cap: the cap
	} {
		prevMedian := time.Duration(0)
		for attempt := 1; attempt <= 20; attempt++ {
			nominal := c.base
			for i := 1; i < attempt && nominal < c.max; i++ {
				nominal *= 2
			}
			nominal = min(nominal, c.max)
			lo, hi := nominal-nominal/5, min(nominal+nominal/5, c.max)
			got := make([]time.Duration, samples)
			for i := range got {
				d := Backoff(attempt, c.base, c.max)
				if d < lo || d > hi {
					t.Fatalf("Backoff(%d, %v, %v) = %v, want within [%v, %v]", attempt, c.base, c.max, d, lo, hi)
				}
				if d <= 0 {
					t.Fatalf("Backoff(%d, %v, %v) = %v, not positive", attempt, c.base, c.max, d)
				}
				got[i] = d
			}
			slices.Sort(got)
			// Jitter is real: not every sample is the same.
			if nominal >= 100*time.Millisecond && got[0] == got[samples-1] {
				t.Errorf("Backoff(%d, %v, %v): no jitter (%v)", attempt, c.base, c.max, got[0])
			}
			// Growth: the median roughly doubles until the cap.
			median := got[samples/2]
			if nominal < c.max && prevMedian > 0 && median < prevMedian*3/2 {
				t.Errorf("backoff attempt %d median %v, attempt %d median %v: not growing", attempt, median, attempt-1, prevMedian)
			}
			if median < prevMedian*4/5 {
				t.Errorf("backoff attempt %d median %v fell from %v", attempt, median, prevMedian)
			}
			prevMedian = median
		}
	}
}

func TestBackoffJitterBothWays(t *testing.T) {
	var below, above bool
	for range 1000 {
		d := Backoff(1, time.Second, time.Hour)
		below = below || d < time.Second
		above = above || d > time.Second
	}
	if !below || !above {
		t.Fatalf("jitter only one way: below=%v above=%v", below, above)
	}
}

func TestBackoffEdgeAttempts(t *testing.T) {
	// Attempt 0 or negative behaves as the first; a huge attempt hits the
	// cap without overflowing.
	for _, a := range []int{0, -5} {
		if d := Backoff(a, time.Second, time.Minute); d < 800*time.Millisecond || d > 1200*time.Millisecond {
			t.Errorf("Backoff(%d) = %v", a, d)
		}
	}
	for _, a := range []int{64, 1000, 1 << 30} {
		if d := Backoff(a, time.Second, 10*time.Minute); d < 8*time.Minute || d > 10*time.Minute {
			t.Errorf("Backoff(%d) = %v", a, d)
		}
	}
	if d := Backoff(3, 0, time.Minute); d != 0 {
		t.Errorf("zero base: %v", d)
	}
}

func TestBackoffSleep(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond) {
		t.Fatal("sleep with a live ctx reported false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if Sleep(ctx, time.Hour) {
		t.Fatal("sleep with a done ctx reported true")
	}
	if time.Since(start) > time.Second {
		t.Fatal("sleep did not return at once for a done ctx")
	}
}
