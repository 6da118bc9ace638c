//go:build !linux

package easyjob

import (
	"runtime"
	"time"
)

// sleepUntil returns at local time t, within microseconds, by polling the
// clock and yielding. Meant for short waits (wakeEarly).
func sleepUntil(t time.Time) {
	for time.Now().Before(t) {
		runtime.Gosched()
	}
}
