package dispatch

import (
	"testing"
	"time"
)

func TestBossWaitWakesEarlyThenPrecise(t *testing.T) {
	if w, p := Wait(time.Time{}); p || w != time.Hour {
		t.Fatalf("nothing queued: got %v precise=%v, want an hour on the timer", w, p)
	}
	far := time.Now().Add(time.Second)
	w, p := Wait(far)
	if p || w <= 0 || w > time.Second-wakeEarly {
		t.Fatalf("fire in 1s: got %v precise=%v, want the timer to go off wakeEarly before it", w, p)
	}
	if _, p := Wait(time.Now().Add(wakeEarly / 2)); !p {
		t.Fatal("fire within wakeEarly: want a precise sleep, not the timer")
	}
	if _, p := Wait(time.Now().Add(-time.Second)); !p {
		t.Fatal("overdue fire: want it fired now (precise path returns at once)")
	}
}

func TestSleepUntilNeverReturnsEarly(t *testing.T) {
	for range 50 {
		at := time.Now().Add(300 * time.Microsecond)
		SleepUntil(at)
		if now := time.Now(); now.Before(at) {
			t.Fatalf("sleepUntil returned %v before its instant", at.Sub(now))
		}
	}
	SleepUntil(time.Now().Add(-time.Hour)) // past: returns at once
}
