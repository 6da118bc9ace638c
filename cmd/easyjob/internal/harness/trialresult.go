package harness

import (
	"fmt"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// nodeResult is one node's share of a run.
type nodeResult struct {
	Name           string  `json:"name"`
	NodeIDs        []int64 `json:"node_ids"`
	Fires          int     `json:"fires"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	PeakRSSBytes   int64   `json:"peak_rss_bytes"`
	RoundTrips     int64   `json:"round_trips"`
	ClaimConflicts int64   `json:"claim_conflicts"`
	FencedFinishes int64   `json:"fenced_finishes"`
	QueriesPerSec  float64 `json:"queries_per_sec"` // over the measured window
	Exit           string  `json:"exit,omitempty"`
	windowCalls    storeStats
	windowFires    int
	windowSeconds  float64
	final          storeStats
}

// trialResult is the outcome of one bench run.
type trialResult struct {
	Mode              string             `json:"mode"` // processes | in-process
	Nodes             int                `json:"nodes"`
	Tasks             int                `json:"tasks"`
	Cron              string             `json:"cron"`
	Strategy          string             `json:"strategy"`
	GOMAXPROCS        int                `json:"node_gomaxprocs,omitempty"` // --gomaxprocs; 0: Go's own choice
	DurationSeconds   float64            `json:"duration_seconds"`
	Fires             int                `json:"fires"`
	FiresPerSec       float64            `json:"fires_per_sec"`
	Steady            steadyReport       `json:"steady"`
	Duplicates        int                `json:"duplicates"`
	DuplicateExamples []string           `json:"duplicate_examples,omitempty"`
	MissedExamples    []string           `json:"missed_examples,omitempty"`
	ClaimAsked        int64              `json:"claim_refs_asked"`
	ClaimWon          int64              `json:"claim_rows_won"`
	ClaimConflicts    int64              `json:"claim_conflicts"`
	RoundTrips        int64              `json:"round_trips_total"`
	RoundTripsPerFire float64            `json:"round_trips_per_fire"` // steady window
	CallsPerFire      map[string]float64 `json:"calls_per_fire"`       // steady window, by method
	QueriesPerSecNode float64            `json:"queries_per_sec_per_node"`
	CallsPerSecNode   map[string]float64 `json:"calls_per_sec_per_node"` // measured window, by method
	// CallMSPerSecNode is the time the store calls took per second (round
	// trip included, as the node saw it), measured window, by method.
	CallMSPerSecNode map[string]float64 `json:"call_ms_per_sec_per_node"`
	FencedFinishes   int64              `json:"fenced_finishes"`
	StoreErrors      map[string]int64   `json:"store_errors,omitempty"`
	CPUWholeProcess  bool               `json:"cpu_is_whole_process,omitempty"`
	dbCost                              // measured window, server-wide
	PerNode          []nodeResult       `json:"per_node"`
	Database         string             `json:"database"`
	// Schedules is the runtime-schedules mode's report (bench --schedules).
	Schedules *schedulesResult `json:"schedules,omitempty"`
}

// newTrialResult analyses one run: the steady window's missed fires and
// start lag, duplicates, and the nodes' store counters. With a plan (the
// runtime-schedules mode) the steady window judges the K every-second
// schedules' fires only: the burst is judged apart.
func newTrialResult(o benchOpts, p nodeParams, database string, m measurement, fires []fire, nodes []nodeResult, plan *schedulePlan) (*trialResult, error) {
	res := &trialResult{
		Mode: "in-process", Nodes: o.nodes, Tasks: p.Tasks, Cron: p.Cron, Strategy: p.Strategy, GOMAXPROCS: p.GOMAXPROCS,
		DurationSeconds: m.tEnd.Sub(m.t0).Seconds(), Fires: len(fires), Database: database,
		CallsPerFire: map[string]float64{}, CallsPerSecNode: map[string]float64{}, CallMSPerSecNode: map[string]float64{},
		StoreErrors: map[string]int64{},
	}
	if res.Strategy == "" {
		res.Strategy = "default"
	}
	if o.procs {
		res.Mode = "processes"
	}
	res.FiresPerSec = float64(len(fires)) / res.DurationSeconds

	steady := fires
	if plan != nil {
		steady = plan.steadyFires(fires)
	}
	from, to := steadyWindow(m.t0, m.tEnd, steady, o.fromStart)
	var shift func(string) time.Duration
	if plan != nil && plan.spread > 0 {
		shift = func(task string) time.Duration { return easyjob.SpreadOffset(task, plan.spread) }
	}
	expected, err := cronTimes(p.Cron, from.Add(-plan.shiftSpan()), to)
	if err != nil {
		return nil, err
	}
	res.Steady = analyzeSteadyShifted(steady, p.taskNames(), expected, from, to, shift)
	for _, miss := range res.Steady.missedList {
		res.MissedExamples = append(res.MissedExamples, fmt.Sprintf("%s @ %s", miss.Task, miss.Sched.Format("15:04:05")))
	}
	procName := func(i int) string {
		if i < len(nodes) && o.procs {
			return nodes[i].Name
		}
		return "-"
	}
	for _, d := range duplicates(fires) {
		res.Duplicates += len(d.Runs) - 1
		if len(res.DuplicateExamples) < 10 {
			for _, f := range d.Runs {
				res.DuplicateExamples = append(res.DuplicateExamples, fmtFire(f, procName))
			}
		}
	}
	res.addCounters(o.procs, m, fires, nodes)
	res.dbCost = newDBCost(m.dbA, m.dbB, fires)
	res.PerNode = nodes
	res.CPUWholeProcess = !o.procs
	return res, nil
}

// addCounters fills the store counters of res and nodes: totals over the
// run, and rates over the measured window [m.snapA, m.snapB].
func (res *trialResult) addCounters(procs bool, m measurement, fires []fire, nodes []nodeResult) {
	var window storeStats
	windowFires := 0
	var total storeStats
	for i := range nodes {
		nd := &nodes[i]
		total.add(nd.final)
		if m.snapA != nil && i < len(m.snapA) && i < len(m.snapB) {
			a, b := m.snapA[i], m.snapB[i]
			if a.At == 0 {
				a.At = m.tA.UnixNano()
			}
			nd.windowCalls = b.sub(a)
			nd.windowSeconds = time.Duration(b.At - a.At).Seconds()
			for _, f := range fires {
				if f.Start >= a.At && f.Start < b.At && nodeOwns(procs, i, nd, f) {
					nd.windowFires++
				}
			}
			if nd.windowSeconds > 0 {
				nd.QueriesPerSec = float64(nd.windowCalls.RoundTrips()) / nd.windowSeconds
				for k, v := range nd.windowCalls.Calls {
					if k != "Listen" {
						res.CallsPerSecNode[k] += float64(v) / nd.windowSeconds / float64(len(nodes))
					}
				}
				for k, v := range nd.windowCalls.CallNanos {
					if k != "Listen" {
						res.CallMSPerSecNode[k] += float64(v) / 1e6 / nd.windowSeconds / float64(len(nodes))
					}
				}
			}
			window.add(nd.windowCalls)
			windowFires += nd.windowFires
			res.QueriesPerSecNode += nd.QueriesPerSec / float64(len(nodes))
		}
	}
	res.ClaimAsked, res.ClaimWon, res.ClaimConflicts = total.ClaimAsked, total.ClaimWon, total.Conflicts()
	res.RoundTrips, res.FencedFinishes = total.RoundTrips(), total.FencedFinish+total.StartLost
	for k, v := range total.Errors {
		if v > 0 {
			res.StoreErrors[k] = v
		}
	}
	if windowFires > 0 {
		res.RoundTripsPerFire = float64(window.RoundTrips()) / float64(windowFires)
		for k, v := range window.Calls {
			if k != "Listen" {
				res.CallsPerFire[k] = float64(v) / float64(windowFires)
			}
		}
	}
}

// nodeOwns reports whether fire f was run by node i.
func nodeOwns(procs bool, i int, nd *nodeResult, f fire) bool {
	if procs {
		return f.Proc == i
	}
	return slices.Contains(nd.NodeIDs, f.Node)
}

// firstFire returns the earliest scheduled time in fires (the moment the
// first node had registered the tasks), or the zero time.
func firstFire(fires []fire) time.Time {
	var first int64
	for _, f := range fires {
		if first == 0 || f.Sched < first {
			first = f.Sched
		}
	}
	if first == 0 {
		return time.Time{}
	}
	return time.Unix(0, first)
}

// steadyWindow is the window whose fires a trial checks, for a run from t0
// to tEnd: from steadyStart in (or, fromStart, from the second after the
// tasks' very first fire) to steadyEndMargin before the end.
func steadyWindow(t0, tEnd time.Time, fires []fire, fromStart bool) (from, to time.Time) {
	from, to = t0.Add(steadyStart), tEnd.Add(-steadyEndMargin)
	if first := firstFire(fires); first.After(from) {
		// New tasks first fire after their registration (a lead of 150 µs a
		// task, at most 3 s, see README): with many tasks that is after 3 s
		// in, and no fire is owed before it. Every task shares that first
		// fire time, so a task that misses it still counts as missed.
		from = first
	}
	if fromStart {
		// From the second after the tasks' very first fire: that one comes
		// due within a second of the first node creating the tasks, before
		// its first claim of all of them can return. Every join is inside.
		from = firstFire(fires).Add(time.Second)
	}
	return from, to
}
