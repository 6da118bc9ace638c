package dispatch

import (
	"syscall"
	"time"
)

// spinLast is the end of a precise sleep spent polling the clock: a
// nanosleep overshoots by some tens of microseconds.
const spinLast = 200 * time.Microsecond

// SleepUntil returns at local time t, within microseconds: the thread
// sleeps in nanosleep (a high-resolution kernel timer; the runtime hands
// its P to other goroutines meanwhile) until just before t, then polls the
// clock. Meant for short waits (wakeEarly).
func SleepUntil(t time.Time) {
	if d := time.Until(t) - spinLast; d > 0 {
		ts := syscall.NsecToTimespec(int64(d))
		_ = syscall.Nanosleep(&ts, nil) // EINTR: the spin below covers the rest
	}
	for time.Now().Before(t) {
	}
}
