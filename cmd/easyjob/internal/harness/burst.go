package harness

import (
	"maps"
	"slices"
	"time"
)

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
	// ByNode is the same per node that ran burst fires, by node id: a
	// late tail on one node (a stall) reads differently from one spread
	// over all (the cores shared).
	ByNode []burstNode `json:"by_node,omitempty"`
}

// burstNode is one node's share of a burst.
type burstNode struct {
	Node int64   `json:"node"`
	Lag  latency `json:"start_lag"`
}

// analyzeBurst measures the burst of expected schedules due at at from
// the fires whose task isBurst names: each schedule's first run counts
// (a second run is a duplicate, counted with the others).
func analyzeBurst(fires []fire, isBurst func(string) bool, at time.Time, expected int) burstReport {
	r := burstReport{At: at, Expected: expected}
	first := map[string]fire{}
	for _, f := range fires {
		if !isBurst(f.Task) {
			continue
		}
		if f.Sched != at.UnixNano() {
			r.OtherSched++
		}
		if s, ok := first[f.Task]; !ok || f.Start < s.Start {
			first[f.Task] = f
		}
	}
	lags := make([]time.Duration, 0, len(first))
	byNode := map[int64][]time.Duration{}
	var lo, hi int64
	for _, f := range first {
		s := f.Start
		lags = append(lags, time.Duration(s-at.UnixNano()))
		byNode[f.Node] = append(byNode[f.Node], time.Duration(s-at.UnixNano()))
		if lo == 0 || s < lo {
			lo = s
		}
		hi = max(hi, s)
	}
	r.Fired, r.Missed = len(first), max(expected-len(first), 0)
	r.Lag = summarize(lags)
	r.SpreadMS = ms(time.Duration(hi - lo))
	for _, n := range slices.Sorted(maps.Keys(byNode)) {
		r.ByNode = append(r.ByNode, burstNode{Node: n, Lag: summarize(byNode[n])})
	}
	return r
}
