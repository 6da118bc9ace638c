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
	// Peak is the second of the window with the most fires scheduled in
	// it (a storm's second, or the busiest of a spread one) and their
	// start lag; nil when no fire was scheduled in the window.
	Peak       *peakSecond `json:"peak_second,omitempty"`
	missedList []missing
}

// peakSecond is the busiest second of a steady window.
type peakSecond struct {
	At    time.Time `json:"at"`
	Fires int       `json:"fires"`
	Lag   latency   `json:"start_lag"`
}

// busiestSecond returns the second (UTC) with the most lags in bySec,
// the earliest of equals, and its lags.
func busiestSecond(bySec map[int64][]time.Duration) *peakSecond {
	var best int64
	for sec, ls := range bySec {
		if n := len(bySec[best]); len(ls) > n || (len(ls) == n && sec < best) {
			best = sec
		}
	}
	if len(bySec[best]) == 0 {
		return nil
	}
	return &peakSecond{At: time.Unix(best, 0).UTC(), Fires: len(bySec[best]), Lag: summarize(bySec[best])}
}

// analyzeSteady checks every task × fire time of the window for exactly one
// ledger entry and measures the start lag of those fires.
func analyzeSteady(fires []fire, tasks []string, expected []time.Time, from, to time.Time) steadyReport {
	return analyzeSteadyShifted(fires, tasks, expected, from, to, nil)
}

// analyzeSteadyShifted is analyzeSteady for tasks whose grids are moved
// (easyjob.Spread): task's fires are the expected cron times +
// shift(task), those that fall in [from, to] checked (expected must
// start early enough to cover the largest shift). A nil shift moves none.
func analyzeSteadyShifted(fires []fire, tasks []string, expected []time.Time, from, to time.Time, shift func(task string) time.Duration) steadyReport {
	r := steadyReport{WindowFrom: from, WindowTo: to}
	seen := make(map[fireKey]bool, len(fires))
	var lags []time.Duration
	bySec := map[int64][]time.Duration{}
	lo, hi := from.UnixNano(), to.UnixNano()
	for _, f := range fires {
		seen[fireKey{f.Task, f.Sched}] = true
		if f.Sched >= lo && f.Sched <= hi {
			lags = append(lags, f.Lag())
			sec := time.Unix(0, f.Sched).Unix()
			bySec[sec] = append(bySec[sec], f.Lag())
		}
	}
	for _, task := range tasks {
		var off time.Duration
		if shift != nil {
			off = shift(task)
		}
		for _, t := range expected {
			if t = t.Add(off); t.Before(from) || t.After(to) {
				continue
			}
			r.Expected++
			if !seen[fireKey{task, t.UnixNano()}] {
				r.Missed++
				if len(r.missedList) < 20 {
					r.missedList = append(r.missedList, missing{task, t})
				}
			}
		}
	}
	r.Lag = summarize(lags)
	r.Peak = busiestSecond(bySec)
	if w := to.Sub(from).Seconds(); w > 0 {
		r.Rate = float64(len(lags)) / w
	}
	return r
}
