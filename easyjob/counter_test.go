package easyjob

import (
	"testing"
	"time"
)

func TestRecentCounterWindow(t *testing.T) {
	var r recentCounter
	t0 := time.Unix(1_000_000, 0)
	for i := range 90 { // one event per second for 90 s
		r.add(t0.Add(time.Duration(i) * time.Second))
	}
	now := t0.Add(89 * time.Second)
	if got := r.sum(now); got != 60 {
		t.Fatalf("sum over the last minute = %d, want 60", got)
	}
	if got := r.sum(now.Add(30 * time.Second)); got != 30 {
		t.Fatalf("sum 30 s later = %d, want 30", got)
	}
	if got := r.sum(now.Add(2 * time.Minute)); got != 0 {
		t.Fatalf("sum after two quiet minutes = %d, want 0", got)
	}
}
