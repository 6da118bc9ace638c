package harness

import "time"

// burstReport is the burst second of a runtime-schedules trial: B one-off
// schedules all due at At, and how late their fires started.
type burstReport struct {
	At time.Time `json:"at"`
	// IntoWindow is how far into the measured window (steadyStart after
	// the nodes started) At fell, in seconds.
	IntoWindow float64 `json:"seconds_into_measured_window"`
	Expected   int     `json:"expected"`
	Fired      int     `json:"fired"` // distinct burst schedules that ran
	Missed     int     `json:"missed"`
	// OtherSched counts burst fires whose scheduled time was not At.
	OtherSched int `json:"fires_scheduled_otherwise,omitempty"`
	// Lag is the start lag of each burst schedule's first run versus At.
	Lag latency `json:"start_lag"`
	// Spread is from the first burst run's start to the last one's.
	SpreadMS float64 `json:"spread_ms"`
}

// analyzeBurst measures the burst of expected schedules due at at from
// the fires whose task isBurst names: each schedule's first run counts
// (a second run is a duplicate, counted with the others).
func analyzeBurst(fires []fire, isBurst func(string) bool, at time.Time, expected int) burstReport {
	r := burstReport{At: at, Expected: expected}
	first := map[string]int64{}
	for _, f := range fires {
		if !isBurst(f.Task) {
			continue
		}
		if f.Sched != at.UnixNano() {
			r.OtherSched++
		}
		if s, ok := first[f.Task]; !ok || f.Start < s {
			first[f.Task] = f.Start
		}
	}
	lags := make([]time.Duration, 0, len(first))
	var lo, hi int64
	for _, s := range first {
		lags = append(lags, time.Duration(s-at.UnixNano()))
		if lo == 0 || s < lo {
			lo = s
		}
		hi = max(hi, s)
	}
	r.Fired, r.Missed = len(first), max(expected-len(first), 0)
	r.Lag = summarize(lags)
	r.SpreadMS = ms(time.Duration(hi - lo))
	return r
}
