package harness

import (
	"fmt"
	"io"
	"sort"
)

// print writes t as the bench report.
func (t *trialResult) print(w io.Writer) {
	gmp := ""
	if t.GOMAXPROCS > 0 {
		gmp = fmt.Sprintf(", GOMAXPROCS %d per node", t.GOMAXPROCS)
	}
	fmt.Fprintf(w, "easyjob bench: %d nodes (%s), %d tasks on %q, strategy %s, %.0fs%s\n\n",
		t.Nodes, t.Mode, t.Tasks, t.Cron, t.Strategy, t.DurationSeconds, gmp)
	var tb table
	tb.add("fires", fmt.Sprintf("%d  (%.1f/s over the run, %.1f/s in the steady window)", t.Fires, t.FiresPerSec, t.Steady.Rate))
	tb.add("start lag", t.Steady.Lag.String()+"  [fires scheduled in the steady window]")
	if pk := t.Steady.Peak; pk != nil {
		tb.add("peak second", fmt.Sprintf("%s UTC: %d fires scheduled, start lag %s", pk.At.Format("15:04:05"), pk.Fires, pk.Lag))
	}
	tb.add("duplicates", fmt.Sprintf("%d  (same task and scheduled time run twice)", t.Duplicates))
	tb.add("missed", fmt.Sprintf("%d of %d expected  (steady window %s..%s UTC)", t.Steady.Missed, t.Steady.Expected,
		t.Steady.WindowFrom.UTC().Format("15:04:05"), t.Steady.WindowTo.UTC().Format("15:04:05")))
	tb.add("claim conflicts", fmt.Sprintf("%d of %d claims attempted  (%d won)", t.ClaimConflicts, t.ClaimAsked, t.ClaimWon))
	tb.add("round trips/fire", fmt.Sprintf("%.3f  [%s]", t.RoundTripsPerFire, perFireF(t.CallsPerFire)))
	tb.add("queries/s/node", fmt.Sprintf("%.2f", t.QueriesPerSecNode))
	tb.add("store ms/s/node", perSecF(t.CallMSPerSecNode)+"  [time the calls took, round trip included]")
	tb.add("fenced finishes", t.FencedFinishes)
	t.addRows(&tb)
	if len(t.StoreErrors) > 0 {
		tb.add("store errors", fmt.Sprint(t.StoreErrors))
	}
	tb.write(w, "  ")
	fmt.Fprintln(w)
	var nt table
	cpuHdr, rssHdr := "cpu-s", "peak-rss"
	if t.CPUWholeProcess {
		cpuHdr, rssHdr = "cpu-s(process)", "peak-rss(process)"
	}
	nt.add("node", "ids", "fires", cpuHdr, rssHdr, "round-trips", "queries/s", "conflicts", "fenced", "exit")
	for _, n := range t.PerNode {
		exit := n.Exit
		if exit == "" {
			exit = "ok"
		}
		nt.add(n.Name, fmt.Sprint(n.NodeIDs), n.Fires, fmt.Sprintf("%.2f", n.CPUSeconds), mib(n.PeakRSSBytes),
			n.RoundTrips, fmt.Sprintf("%.2f", n.QueriesPerSec), n.ClaimConflicts, n.FencedFinishes, exit)
	}
	nt.write(w, "  ")
	if len(t.DuplicateExamples) > 0 {
		fmt.Fprintln(w, "\n  duplicate runs (first groups):")
		for _, s := range t.DuplicateExamples {
			fmt.Fprintln(w, "    "+s)
		}
	}
	if len(t.MissedExamples) > 0 {
		fmt.Fprintln(w, "\n  missed fires (first ones):")
		for _, s := range t.MissedExamples {
			fmt.Fprintln(w, "    "+s)
		}
	}
	fmt.Fprintln(w)
	if t.Schedules != nil {
		t.Schedules.print(w)
	}
}

// printIdle writes t as the idle-cost report.
func (t *trialResult) printIdle(w io.Writer) {
	fmt.Fprintf(w, "idle cost: %d nodes (%s), %d tasks on %q (never due), %.0fs\n\n", t.Nodes, t.Mode, t.Tasks, t.Cron, t.DurationSeconds)
	var tb table
	tb.add("queries/s per node", fmt.Sprintf("%.2f  [%s]", t.QueriesPerSecNode, perSecF(t.CallsPerSecNode)))
	for _, n := range t.PerNode {
		tb.add("  "+n.Name, fmt.Sprintf("%.2f queries/s, cpu %.2fs, peak rss %s", n.QueriesPerSec, n.CPUSeconds, mib(n.PeakRSSBytes)))
	}
	tb.add("fires", t.Fires)
	if r := t.Schedules; r != nil {
		tb.add("runtime schedules", fmt.Sprintf("%d stored, none due; loader (DueTasks) %.2f ms/s per node (%.2f calls/s); largest node rss %s",
			r.Stored, r.LoaderMSPerSec, r.LoaderCallsPerSec, mib(r.MaxNodeRSS)))
	}
	tb.write(w, "  ")
	fmt.Fprintln(w)
}

// perFireF and perSecF format per-method rates, largest first.
func perFireF(m map[string]float64) string { return fmtRates(m, "%s %.3f") }
func perSecF(m map[string]float64) string  { return fmtRates(m, "%s %.2f") }

// fmtRates formats the rates of m above 0.0005 with f, largest first.
func fmtRates(m map[string]float64, f string) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0.0005 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf(f, k, m[k])
	}
	return s
}
