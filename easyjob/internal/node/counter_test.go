package node

import (
	"testing"
	"time"
)

func TestRecentCounterWindow(t *testing.T) {
	var r recentCounter
	t0 := time.Unix(1_000_000, 0)
	for i := range 30 { // three events per second for 30 s
		for range 3 {
			r.add(t0.Add(time.Duration(i)*time.Second + 100*time.Millisecond))
		}
	}
	last := t0.Add(29 * time.Second)
	// Within the last second, the count does not depend on the phase.
	for _, into := range []time.Duration{0, 200 * time.Millisecond, 999 * time.Millisecond} {
		if got := r.sum(last.Add(into)); got != 30 {
			t.Fatalf("sum %v into the last second = %d, want 30 (10 complete seconds)", into, got)
		}
	}
	if got := r.sum(last.Add(5 * time.Second)); got != 18 {
		t.Fatalf("sum 5 s after the last event = %d, want 18 (6 complete seconds)", got)
	}
	if got := r.sum(last.Add(time.Minute)); got != 0 {
		t.Fatalf("sum after a quiet minute = %d, want 0", got)
	}
}
