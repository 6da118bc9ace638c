//go:build !linux

package dispatch

import (
	"runtime"
	"time"
)

// SleepUntil returns at local time t, within microseconds, by polling the
// clock and yielding. Meant for short waits (wakeEarly).
func SleepUntil(t time.Time) {
	for time.Now().Before(t) {
		runtime.Gosched()
	}
}
