package main

import (
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// relTime says when t is relative to now (both store clock): "3s ago",
// "in 2m", "now" within a second, "-" for the zero time.
func relTime(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	if !t.Before(repository.AwaitingParents) {
		return "after parents" // a DAG step waiting for its parents' next fire
	}
	d := now.Sub(t) // saturates at ±292 years
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d > 0:
		return shortDuration(d) + " ago"
	default:
		return "in " + shortDuration(-d)
	}
}

// shortDuration prints d with at most two units, rounded: 45s, 2m5s,
// 3h4m, 2d3h; below a second in milliseconds.
func shortDuration(d time.Duration) string {
	if d < 0 {
		return "-" + shortDuration(max(-d, 0)) // -MinInt64 stays negative: printed as 0
	}
	const day = 24 * time.Hour
	// Round to the precision printed: 59.8s is "1m", 59m59.8s is "1h".
	switch {
	case d >= day:
		d = d.Round(time.Hour)
	case d >= time.Hour:
		d = d.Round(time.Minute)
	case d >= time.Second:
		d = d.Round(time.Second)
	}
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return twoUnits(int(d/time.Minute), "m", int(d%time.Minute/time.Second), "s")
	case d < day:
		return twoUnits(int(d/time.Hour), "h", int(d%time.Hour/time.Minute), "m")
	default:
		return twoUnits(int(d/day), "d", int(d%day/time.Hour), "h")
	}
}

// twoUnits prints "<a><ua><b><ub>", or "<a><ua>" when b is 0.
func twoUnits(a int, ua string, b int, ub string) string {
	if b == 0 {
		return fmt.Sprintf("%d%s", a, ua)
	}
	return fmt.Sprintf("%d%s%d%s", a, ua, b, ub)
}
