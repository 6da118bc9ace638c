package node

import (
	"sync"
	"testing"
	"time"
)

var clockT0 = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// clockSample feeds one round trip sent at clockT0+at, lasting rtt, whose
// database reading was taken `read` after the send, by a database clock
// offset ahead of the local one.
func clockSample(c *clockOffset, at, rtt, read, offset time.Duration) {
	sent := clockT0.Add(at)
	c.observe(sent, sent.Add(rtt), sent.Add(read).Add(offset))
}

func wantOffset(t *testing.T, c *clockOffset, what string, want time.Duration) {
	t.Helper()
	if got := c.get(); got != want {
		t.Fatalf("%s: offset %v, want %v", what, got, want)
	}
}

// On one host the offset is zero, however long the statement ran after
// reading now() (a commit's flush): a midpoint estimate would say the
// database is behind by half of that.
func TestClockOffsetSameHost(t *testing.T) {
	var c clockOffset
	wantOffset(t, &c, "no sample", 0)
	clockSample(&c, 0, 8*time.Millisecond, 100*time.Microsecond, 0)
	wantOffset(t, &c, "slow commit after an early now()", 0)
	clockSample(&c, time.Second, 300*time.Microsecond, 250*time.Microsecond, 0)
	wantOffset(t, &c, "second sample", 0)
}

// A real offset is bounded by each round trip; the bounds of several
// intersect, and the estimate is their edge nearest zero.
func TestClockOffsetIntersects(t *testing.T) {
	var c clockOffset
	// Database 1s ahead; read 20ms into a 100ms trip: bounds [0.92s, 1.02s].
	clockSample(&c, 0, 100*time.Millisecond, 20*time.Millisecond, time.Second)
	wantOffset(t, &c, "one sample", 920*time.Millisecond)
	// Read 2ms before the reply of a 10ms trip: bounds [0.998s, 1.008s].
	clockSample(&c, time.Second, 10*time.Millisecond, 8*time.Millisecond, time.Second)
	wantOffset(t, &c, "tighter sample", 998*time.Millisecond)
	// A looser sample leaves the intersection as it was.
	clockSample(&c, 2*time.Second, 50*time.Millisecond, 25*time.Millisecond, time.Second)
	wantOffset(t, &c, "looser sample", 998*time.Millisecond)
	// Database behind: bounds [-0.705s, -0.7s], nearest zero is -0.7s.
	var neg clockOffset
	clockSample(&neg, 0, 5*time.Millisecond, 0, -700*time.Millisecond)
	wantOffset(t, &neg, "database behind", -700*time.Millisecond)
	// A zero database time (no reading) and a reply before its send are ignored.
	neg.observe(clockT0, clockT0.Add(time.Millisecond), time.Time{})
	neg.observe(clockT0, clockT0.Add(-time.Millisecond), clockT0)
	wantOffset(t, &neg, "ignored samples", -700*time.Millisecond)
}

// TestClockOffsetStep: after a clock step the old bounds exclude the new
// ones; the newest sample wins and the estimate follows at once.
func TestClockOffsetStep(t *testing.T) {
	var c clockOffset
	for i := range 5 {
		clockSample(&c, time.Duration(i)*time.Second, time.Millisecond, 0, 5*time.Second)
	}
	wantOffset(t, &c, "before the step", 5*time.Second-time.Millisecond)
	clockSample(&c, 10*time.Second, 2*time.Millisecond, time.Millisecond, 0)
	wantOffset(t, &c, "after the step", 0)
	// Samples older than the window are forgotten.
	for i := range len(c.samples) {
		clockSample(&c, time.Duration(20+i)*time.Second, 4*time.Millisecond, 2*time.Millisecond, 3*time.Second)
	}
	wantOffset(t, &c, "a full window later", 3*time.Second-2*time.Millisecond)
}

func TestClockOffsetConcurrent(t *testing.T) {
	var c clockOffset
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				clockSample(&c, time.Duration(i)*time.Millisecond, time.Duration(g+1)*time.Millisecond, 0, time.Second)
				_ = c.get()
			}
		})
	}
	wg.Wait()
	if got := c.get(); got < time.Second-8*time.Millisecond || got > time.Second {
		t.Fatalf("offset %v outside every sample's bounds", got)
	}
}

// TestSuspectFollowsTheLastBeat checks the suspect rule on the monotonic
// clock: never before the first beat, from DeadAfter minus half a
// heartbeat after the last good beat, and cleared by a newer beat.
func TestSuspectFollowsTheLastBeat(t *testing.T) {
	n := &Node{cfg: Config{HeartbeatInterval: time.Second, DeadAfter: 3 * time.Second}}
	if n.suspect() {
		t.Fatal("suspect before any heartbeat")
	}
	sent := time.Now()
	n.beat(sent)
	at := monoAt(sent)
	if n.suspectAt(at+2500*time.Millisecond) || !n.suspectAt(at+2500*time.Millisecond+1) {
		t.Fatal("want suspect from exactly DeadAfter - HeartbeatInterval/2 (2.5 s) after the beat")
	}
	if n.suspect() {
		t.Fatal("suspect just after a good beat")
	}
	n.beat(sent.Add(-3 * time.Second)) // a beat long ago: silent since
	if !n.suspect() {
		t.Fatal("not suspect 3 s after the last beat")
	}
	if got := n.lastBeat.Load(); got != sent.Add(-3*time.Second).UnixNano() {
		t.Fatalf("lastBeat %d, want the beat's wall time", got)
	}
}

// A step of the database's clock (an hour ahead, as after a failover to a
// standby whose clock is ahead) is seen as one; round-trip jitter and a
// constant offset are not.
func TestClockOffsetStepSeen(t *testing.T) {
	var c clockOffset
	for i := range 5 {
		clockSample(&c, time.Duration(i)*time.Second, 3*time.Millisecond, time.Millisecond, 40*time.Millisecond)
	}
	if c.steppedWithin(time.Hour, clockT0.Add(5*time.Second)) {
		t.Fatal("a steady offset counted as a step")
	}
	clockSample(&c, 5*time.Second, 3*time.Millisecond, time.Millisecond, time.Hour)
	if got := c.get(); got < time.Hour-3*time.Millisecond || got > time.Hour {
		t.Fatalf("after the step: offset %v, want about 1h", got)
	}
	if !c.steppedWithin(time.Second, clockT0.Add(5*time.Second+500*time.Millisecond)) {
		t.Fatal("an hour's step not seen")
	}
	if c.steppedWithin(time.Second, clockT0.Add(7*time.Second)) {
		t.Fatal("the step still counts two seconds on, past the window asked")
	}
}
