package node

import (
	"testing"
	"time"
)

// TestCompleterBurstQuiet: the finishes of a burst's fires wait for the
// burst to be under way on the peers, longer for a bigger burst; not when
// the node's last statement returned just before (its database is still
// busy with earlier fires), and not for fires from outside the burst.
func TestCompleterBurstQuiet(t *testing.T) {
	now := time.Now()
	quietOf := func(c *completer, fired time.Time) time.Duration {
		r := &finishReq{}
		c.submit(r, fired)
		return r.quiet.Sub(fired)
	}
	for _, tc := range []struct {
		name  string
		burst int
		wrote time.Duration // how long before the burst the last statement returned
		fired time.Duration // the fire's time, from the burst's
		want  time.Duration
	}{
		{"lone fire", 1, time.Hour, 0, finishQuiet + burstQuietPerFire},
		{"burst of 6 000", 6000, time.Hour, 0, finishQuiet + 6000*burstQuietPerFire},
		{"huge burst: capped", 1_000_000, time.Hour, 0, finishQuiet + burstQuietMax},
		{"database busy", 6000, 10 * time.Millisecond, 0, finishQuiet},
		{"fire from before the burst", 6000, time.Hour, -time.Second, finishQuiet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCompleter(nil, nil, nil)
			c.lastWrite.Store(now.Add(-tc.wrote).UnixNano())
			c.quietAfterBurst(now, tc.burst)
			if got := quietOf(c, now.Add(tc.fired)); got != tc.want {
				t.Fatalf("quiet %v after the fire; want %v", got, tc.want)
			}
		})
	}
}
