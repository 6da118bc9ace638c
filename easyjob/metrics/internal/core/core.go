// Package core holds what the Prometheus and OpenTelemetry observers
// share: metric names and buckets, the per-task table, the last gauges of
// each node, node states read at scrape time, cron intervals and the
// build's version.
package core

import (
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/adhocore/gronx"

	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// Bucket bounds, in seconds.
var (
	// LagBuckets: start lag, 5 ms to 60 s.
	LagBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	// RunBuckets: run duration, 10 ms to 1 h; coarse, as there is one
	// histogram per task.
	RunBuckets = []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600}
	// RecoveryBuckets: how late a recovered task was, 100 ms to 1 h.
	RecoveryBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}
	// StoreBuckets: one store call, 0.5 ms to 10 s.
	StoreBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// Triggers lists every trigger, indexed by TriggerIndex.
var Triggers = [...]observe.Trigger{observe.TriggerCron, observe.TriggerRetry, observe.TriggerMisfire, observe.TriggerChain, observe.TriggerManual}

// TriggerIndex returns t's index in Triggers, -1 for an unknown one.
func TriggerIndex(t observe.Trigger) int {
	switch t {
	case observe.TriggerCron:
		return 0
	case observe.TriggerRetry:
		return 1
	case observe.TriggerMisfire:
		return 2
	case observe.TriggerChain:
		return 3
	case observe.TriggerManual:
		return 4
	}
	return -1
}

// RunStatuses lists the outcomes of a run (EventRunEnd), indexed by
// StatusIndex.
var RunStatuses = [...]repository.ExecStatus{repository.ExecSucceeded, repository.ExecFailed, repository.ExecTimedOut}

// StatusIndex returns s's index in RunStatuses, -1 for another status.
func StatusIndex(s repository.ExecStatus) int {
	switch s {
	case repository.ExecSucceeded:
		return 0
	case repository.ExecFailed:
		return 1
	case repository.ExecTimedOut:
		return 2
	}
	return -1
}

// Claim results, the values of the result label of the claims counter.
const (
	ClaimWon    = "won"
	ClaimLost   = "lost"
	ClaimStolen = "stolen"
)

// Key names one task.
type Key struct{ Group, Task string }

// Tasks maps each task to its state T, made by New on first use. Lookups
// take a read lock and allocate nothing.
type Tasks[T any] struct {
	New func(k Key) *T

	mu sync.RWMutex
	m  map[Key]*T
}

// Get returns the state of (group, task), making it on first use.
func (t *Tasks[T]) Get(group, task string) *T {
	k := Key{group, task}
	t.mu.RLock()
	v := t.m[k]
	t.mu.RUnlock()
	if v != nil {
		return v
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if v = t.m[k]; v == nil {
		if t.m == nil {
			t.m = map[Key]*T{}
		}
		v = t.New(k)
		t.m[k] = v
	}
	return v
}

// Each calls f for every task seen so far.
func (t *Tasks[T]) Each(f func(Key, *T)) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for k, v := range t.m {
		f(k, v)
	}
}

// Version returns the easyjob module's version in this binary ("(devel)"
// when easyjob is the main module built from a work tree, "unknown"
// without build information) and the Go version.
func Version() (version, goVersion string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown", "unknown"
	}
	const path = "github.com/easyjob-go/easyjob"
	version = "unknown"
	if bi.Main.Path == path {
		version = bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			version = d.Version
			if d.Replace != nil && d.Replace.Version != "" {
				version = d.Replace.Version
			}
		}
	}
	if version == "" {
		version = "(devel)"
	}
	return version, bi.GoVersion
}

// intervals caches Interval by expression.
var intervals sync.Map // string → time.Duration

// Interval returns the longest gap between consecutive fires of cron
// (a task's cron as it fired, CRON_TZ prefix allowed) over its next 16
// fires: the interval a "has not succeeded within N intervals" alert
// should use. false for an empty or unparsable expression. Results are
// cached; a first call costs up to a millisecond.
func Interval(cron string) (time.Duration, bool) {
	if v, ok := intervals.Load(cron); ok {
		d := v.(time.Duration)
		return d, d > 0
	}
	expr := strings.TrimSpace(cron)
	if strings.HasPrefix(expr, "CRON_TZ=") {
		_, expr, _ = strings.Cut(expr, " ")
		expr = strings.TrimSpace(expr)
	}
	var longest time.Duration
	if expr != "" && gronx.IsValid(expr) {
		t := time.Now().UTC().Truncate(time.Second)
		prev, err := gronx.NextTickAfter(expr, t, false)
		for i := 0; i < 16 && err == nil; i++ {
			var next time.Time
			if next, err = gronx.NextTickAfter(expr, prev, false); err == nil && next.After(prev) {
				longest = max(longest, next.Sub(prev))
				prev = next
			}
		}
	}
	intervals.Store(cron, longest)
	return longest, longest > 0
}
