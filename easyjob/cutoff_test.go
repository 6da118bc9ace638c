package easyjob

import (
	"fmt"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository/memory"
)

// TestCutOffNodeStartsNothing: a node that loses the database (alone: its
// peer still reaches it) starts no fire from the moment it knows, that
// is, from its first failed call. Cut off for less than DeadAfter, its
// fires wait and run once when the database answers (every second of
// every task exactly once, across the cut); cut off for longer, its peer
// recovers them and they run once there (issue 30, item 13). Before,
// the node kept starting fires until it judged itself suspect, and past
// DeadAfter each of them ran again on the peer.
func TestCutOffNodeStartsNothing(t *testing.T) {
	for _, cut := range []time.Duration{700 * time.Millisecond, 3 * time.Second} {
		t.Run(cut.String(), func(t *testing.T) { testCutOff(t, cut) })
	}
}

func testCutOff(t *testing.T, cut time.Duration) {
	shared := memory.New()
	var l ledger
	cfg := Config{
		Group: "cutoff", Strategy: "id_hash",
		HeartbeatInterval: 300 * time.Millisecond, LiveAfter: 600 * time.Millisecond, DeadAfter: 2 * time.Second,
		RecoverInterval: 200 * time.Millisecond, PollInterval: 200 * time.Millisecond, FetchWindow: 2 * time.Second,
		ShutdownGrace: 5 * time.Second,
	}
	cutStore := &outageStore{Store: shared}
	ca, cb := cfg, cfg
	ca.Store, cb.Store = cutStore, shared
	a := start(t, ca, everySecond(t, &l, 10))
	b := start(t, cb, everySecond(t, &l, 10))
	waitAllLive(t, []*testNode{a, b})
	aID := int64(a.n.ID())
	waitFor(t, 10*time.Second, "both nodes firing", func() bool {
		seen := map[int64]bool{}
		for _, f := range l.snapshot() {
			seen[f.node] = true
		}
		return len(seen) == 2
	})

	// Cut 500 ms before a second (the node knows within a heartbeat), so
	// that a fire falls inside even the short cut.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1500 * time.Millisecond)))
	from := time.Now()
	cutStore.down.Store(true)
	time.Sleep(cut) // the cut itself
	cutStore.down.Store(false)
	healed := time.Now()
	knew := time.Unix(0, cutStore.failedAt.Load())
	if cutStore.failedAt.Load() == 0 {
		t.Fatal("the cut-off node made no call during the cut")
	}
	if d := knew.Sub(from); d > 500*time.Millisecond {
		t.Fatalf("the cut-off node's first failed call came %v after the cut", d)
	}
	var started []string
	for _, f := range l.snapshot() {
		if f.node == aID && f.started.After(knew.Add(50*time.Millisecond)) && f.started.Before(healed) {
			started = append(started, fmt.Sprintf("%s@%s", f.task, f.scheduled.Format("15:04:05")))
		}
	}
	if len(started) > 0 {
		t.Errorf("the cut-off node started %d fires after its first failed call (%v): %v",
			len(started), knew.Sub(from).Round(time.Millisecond), started)
	}
	waitFor(t, 15*time.Second, "fires after the heal", func() bool { return time.Since(healed) > 3*time.Second })
	if cut < cfg.DeadAfter {
		// Nothing was recovered: every fire ran once, the held ones late.
		assertEachSecondOnce(t, &l, names(10), from.Add(-time.Second), time.Now().Add(-time.Second))
		return
	}
	// Fires it started before it knew ran again on the peer (at least
	// once: their outcome is unknown); every later fire ran once.
	assertEachSecondOnce(t, &l, names(10), knew.Add(time.Second), time.Now().Add(-time.Second))
}
