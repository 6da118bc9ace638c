package node

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestOutageFewLines: an outage of three minutes in which every loop
// fails several times a second writes one line when it begins, one
// reminder a minute and one when the database answers again, naming
// how long it was away with a unit; the failed calls themselves go to
// debug (issue 30, item 10).
func TestOutageFewLines(t *testing.T) {
	var buf safeBuffer
	o := newOutage(zerolog.New(&buf).Level(zerolog.InfoLevel))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o.now = func() time.Time { return now }
	down := errors.New("dial tcp: connection refused")

	o.answered()           // no outage: nothing to say
	for range 3 * 60 * 4 { // 3 minutes, 4 failures a second
		for _, call := range []string{"heartbeat", "loader", "Finish"} {
			o.fail(call, down, 953407752*time.Nanosecond)
		}
		now = now.Add(250 * time.Millisecond)
	}
	if !o.ongoing() {
		t.Fatal("ongoing() = false during the outage")
	}
	o.answered()
	o.answered() // once back, nothing more
	if o.ongoing() {
		t.Fatal("ongoing() = true once the database answered")
	}

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var began, reminders, back int
	for _, l := range lines {
		switch {
		case strings.Contains(l, "database not answering"):
			began++
		case strings.Contains(l, "database still not answering"):
			reminders++
		case strings.Contains(l, "database answering again"):
			back++
			if !strings.Contains(l, `"away":"3m0s"`) || !strings.Contains(l, `"failed_calls":2160`) {
				t.Errorf("back line %s: want away 3m0s and 2160 failed calls", l)
			}
		default:
			t.Errorf("unexpected line at info level: %s", l)
		}
	}
	if began != 1 || reminders != 2 || back != 1 {
		t.Fatalf("lines: %d begin, %d reminders, %d back; want 1, 2, 1:\n%s", began, reminders, back, buf.String())
	}
}

// TestOutagePanicIsNotAnOutage: a loop step that panics is logged at once
// as what it is, not folded into a database outage.
func TestOutagePanicIsNotAnOutage(t *testing.T) {
	var buf safeBuffer
	o := newOutage(zerolog.New(&buf))
	o.fail("loader", &stepPanic{value: "boom"}, time.Second)
	if o.ongoing() {
		t.Fatal("a panic started an outage")
	}
	if out := buf.String(); !strings.Contains(out, "loop step panicked") || !strings.Contains(out, `"retry_in":"1s"`) {
		t.Fatalf("log = %s", out)
	}
}
