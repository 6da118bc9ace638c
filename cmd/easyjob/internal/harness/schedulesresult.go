package harness

import (
	"fmt"
	"io"
	"time"
)

// schedulesResult is what a runtime-schedules trial adds to the bench
// report: the creation, the nodes' memory and loader cost with that many
// schedules stored, the burst second, and the task lists' latency.
type schedulesResult struct {
	Stored      int      `json:"schedules_stored"` // N + B
	EverySecond int      `json:"every_second"`     // K
	Burst       int      `json:"burst"`            // B
	Create      creation `json:"create"`
	// MaxNodeRSS is the largest peak RSS of a node (of the harness
	// process, in-process).
	MaxNodeRSS int64 `json:"max_node_peak_rss_bytes"`
	// LoaderMSPerSec is the time the nodes' DueTasks calls (the loader's
	// query) took per second of the measured window, per node on average
	// (as the node's store wrapper saw it: round trip included);
	// LoaderCallsPerSec their rate and LoaderMSPerCall the mean call.
	LoaderMSPerSec    float64 `json:"loader_ms_per_sec_per_node"`
	LoaderCallsPerSec float64 `json:"loader_calls_per_sec_per_node"`
	LoaderMSPerCall   float64 `json:"loader_ms_per_call"`
	// QuietFires counts fires of the schedules meant never to fall due in
	// the run (0 unless the spread failed).
	QuietFires int          `json:"quiet_schedule_fires"`
	BurstAt    *burstReport `json:"burst_second,omitempty"`
	Lists      *listLatency `json:"lists,omitempty"`
}

// newSchedulesResult gathers the runtime-schedules figures of a trial
// from its creation, fires, nodes and measurement.
func newSchedulesResult(pl *schedulePlan, cr creation, m measurement, fires []fire, nodes []nodeResult) *schedulesResult {
	r := &schedulesResult{Stored: pl.count(), EverySecond: pl.tasks, Burst: pl.burst, Create: cr}
	var took, calls, secs float64
	for _, n := range nodes {
		r.MaxNodeRSS = max(r.MaxNodeRSS, n.PeakRSSBytes)
		if n.windowSeconds > 0 {
			took += float64(n.windowCalls.CallNanos["DueTasks"]) / 1e6
			calls += float64(n.windowCalls.Calls["DueTasks"])
			secs += n.windowSeconds
		}
	}
	if secs > 0 {
		r.LoaderMSPerSec, r.LoaderCallsPerSec = took/secs, calls/secs // Σ over nodes / Σ of their windows
	}
	if calls > 0 {
		r.LoaderMSPerCall = took / calls
	}
	for _, f := range fires {
		if pl.isQuiet(f.Task) {
			r.QuietFires++
		}
	}
	if pl.burst > 0 {
		b := analyzeBurst(fires, isBurst, pl.burstAt, pl.burst)
		b.IntoWindow = pl.burstAt.Sub(m.t0.Add(steadyStart)).Seconds()
		r.BurstAt = &b
	}
	return r
}

// steadyFires are the fires a runtime-schedules trial judges as the
// steady K: those of the every-second schedules (taskName(i), i < K).
func (pl *schedulePlan) steadyFires(fires []fire) []fire {
	out := make([]fire, 0, len(fires))
	for _, f := range fires {
		if i, ok := nameIndex(f.Task, "t"); ok && i < pl.tasks {
			out = append(out, f)
		}
	}
	return out
}

// print writes r under the bench report.
func (r *schedulesResult) print(w io.Writer) {
	fmt.Fprintf(w, "runtime schedules: %d stored (%d every second, %d due in one second), one handler kind\n\n", r.Stored, r.EverySecond, r.Burst)
	var tb table
	c := r.Create
	tb.add("created", fmt.Sprintf("%d in %.1fs = %.0f/s  (%d writers, batches of %d; a batch: %s)",
		c.Schedules, c.Seconds, c.PerSec, c.Writers, c.Batch, c.BatchLatency))
	tb.add("creation cost", fmt.Sprintf("client cpu %s µs, server cpu %s µs, wal %s bytes per schedule  [server-wide]",
		fmtPerFire(c.ClientCPUMicros, 1), fmtPerFire(c.ServerCPUMicros, 1), fmtPerFire(c.WALBytes, 0)))
	analyzed := "not analyzed after"
	if c.AnalyzeSeconds > 0 {
		analyzed = fmt.Sprintf("ANALYZE and CHECKPOINT after: %.1fs", c.AnalyzeSeconds)
	}
	tb.add("statistics", fmt.Sprintf("%s  (server autovacuum %s)", analyzed, c.Autovacuum))
	tb.add("node peak rss", mib(r.MaxNodeRSS)+"  (largest node)")
	tb.add("loader (DueTasks)", fmt.Sprintf("%.2f ms/s per node  (%.2f calls/s, %.2f ms a call, round trip as the node saw it)",
		r.LoaderMSPerSec, r.LoaderCallsPerSec, r.LoaderMSPerCall))
	tb.add("quiet fires", fmt.Sprintf("%d  (fires of the %d schedules never due in the run)", r.QuietFires, r.Stored-r.EverySecond-r.Burst))
	if b := r.BurstAt; b != nil {
		other := ""
		if b.OtherSched > 0 {
			other = fmt.Sprintf(", %d scheduled otherwise", b.OtherSched)
		}
		tb.add("burst second", fmt.Sprintf("%s UTC (%.1fs into the measured window): %d of %d ran, %d missed%s",
			b.At.UTC().Format(time.TimeOnly), b.IntoWindow, b.Fired, b.Expected, b.Missed, other))
		tb.add("burst start lag", fmt.Sprintf("%s  (first to last start %s)", b.Lag, fmtMS(b.SpreadMS)))
		for _, n := range b.ByNode {
			tb.add(fmt.Sprintf("  node %d", n.Node), n.Lag.String())
		}
	}
	if l := r.Lists; l != nil {
		med := func(x latency) string { return fmt.Sprintf("%s (max %s)", fmtMS(x.P50), fmtMS(x.Max)) }
		tb.add("task list", fmt.Sprintf("median of %d, %d%s tasks counted", l.Reps, l.Total, map[bool]string{true: "+"}[l.Capped]))
		tb.add("  TaskPage first", med(l.FirstPage))
		tb.add("  TaskPage last", med(l.DeepPage))
		tb.add("  TaskCounts", med(l.TaskCounts)+"  (the overview every dashboard page reads)")
		tb.add("  dashboard /tasks first", med(l.DashboardFirst)+"  (whole page, cache cold)")
		tb.add("  dashboard /tasks last", med(l.DashboardDeep))
		tb.add("  Client.ListTasks", fmt.Sprintf("%s  (%d rows; CLI status, tasks)", med(l.ClientTasks), l.ClientTasksRows))
		if l.Err != "" {
			tb.add("  error", l.Err)
		}
	}
	tb.write(w, "  ")
	fmt.Fprintln(w)
}
