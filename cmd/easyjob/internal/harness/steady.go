package harness

import (
	"sort"
	"time"
)

// fireKey is one fire of one task: a task and its scheduled time.
type fireKey struct {
	task  string
	sched int64
}

// dupGroup is one (task, scheduled time) run more than once.
type dupGroup struct {
	Task  string `json:"task"`
	Sched int64  `json:"scheduled_unix_nano"`
	Runs  []fire `json:"runs"`
}

// duplicates groups fires by (task, scheduled time) and returns the groups
// with more than one run, each sorted by start.
func duplicates(fires []fire) []dupGroup {
	by := map[fireKey][]fire{}
	for _, f := range fires {
		k := fireKey{f.Task, f.Sched}
		by[k] = append(by[k], f)
	}
	var out []dupGroup
	for k, fs := range by {
		if len(fs) < 2 {
			continue
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i].Start < fs[j].Start })
		out = append(out, dupGroup{Task: k.task, Sched: k.sched, Runs: fs})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Sched != out[j].Sched {
			return out[i].Sched < out[j].Sched
		}
		return out[i].Task < out[j].Task
	})
	return out
}

// missing is one expected fire with no ledger entry.
type missing struct {
	Task  string
	Sched time.Time
}

// steadyReport is what a window without faults must show.
type steadyReport struct {
	WindowFrom time.Time `json:"window_from"`
	WindowTo   time.Time `json:"window_to"`
	Expected   int       `json:"expected_fires"`
	Missed     int       `json:"missed_fires"`
	Rate       float64   `json:"fires_per_sec"` // fires scheduled in the window, per second of it
	Lag        latency   `json:"start_lag"`
	missedList []missing
}

// analyzeSteady checks every task × fire time of the window for exactly one
// ledger entry and measures the start lag of those fires.
func analyzeSteady(fires []fire, tasks []string, expected []time.Time, from, to time.Time) steadyReport {
	r := steadyReport{WindowFrom: from, WindowTo: to, Expected: len(tasks) * len(expected)}
	seen := make(map[fireKey]bool, len(fires))
	var lags []time.Duration
	lo, hi := from.UnixNano(), to.UnixNano()
	for _, f := range fires {
		seen[fireKey{f.Task, f.Sched}] = true
		if f.Sched >= lo && f.Sched <= hi {
			lags = append(lags, f.Lag())
		}
	}
	for _, task := range tasks {
		for _, t := range expected {
			if !seen[fireKey{task, t.UnixNano()}] {
				r.Missed++
				if len(r.missedList) < 20 {
					r.missedList = append(r.missedList, missing{task, t})
				}
			}
		}
	}
	r.Lag = summarize(lags)
	if w := to.Sub(from).Seconds(); w > 0 {
		r.Rate = float64(len(lags)) / w
	}
	return r
}
