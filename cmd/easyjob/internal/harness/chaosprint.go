package harness

import (
	"fmt"
	"io"
	"strings"
)

func (r *chaosResult) print(w io.Writer) {
	fmt.Fprintf(w, "easyjob chaos: %d processes, %d tasks on %q, %.0fs, seed %d\n", r.Procs, r.Tasks, r.Cron, r.DurationSeconds, r.Seed)
	fmt.Fprintf(w, "  heartbeat %s, dead after %s, recover every %s; lost-fire threshold %s; failover target %s\n\n",
		fmtMS(r.HeartbeatMS), fmtMS(r.DeadAfterMS), fmtMS(r.RecoverMS), fmtMS(r.LostThresholdMS), fmtMS(r.FailoverBoundMS))
	var ft table
	ft.add("at (UTC)", "fault", "proc", "node", "lasted", "tasks", "failover p50", "p99", "max", "note")
	for _, f := range r.Faults {
		lasted := "-"
		if !f.Until.IsZero() && f.Kind != "clock-step" { // a step is instant
			lasted = fmtMS(ms(f.Until.Sub(f.At)))
		}
		note := ""
		if f.NotFailedOver > 0 {
			note += fmt.Sprintf("%d never fired again; ", f.NotFailedOver)
		}
		if f.ResumedOnSelf > 0 {
			note += fmt.Sprintf("%d resumed on the same node; ", f.ResumedOnSelf)
		}
		if isPatroniFault(f.Kind) {
			note += f.patroniNote()
		} else if f.Resume.N > 0 {
			what := "PostgreSQL"
			if f.Kind == "pgbouncer-restart" {
				what = "PgBouncer"
			}
			note += fmt.Sprintf("fires resumed %s (p50) / %s (max) after %s answered; ", fmtMS(f.Resume.P50), fmtMS(f.Resume.Max), what)
		}
		if f.Kind == "clock-step" || f.Kind == "clock-failover" {
			note += f.clockNote()
		}
		if f.PGCommandError != "" {
			note += "command failed: " + f.PGCommandError
		}
		p50, p99, mx := "-", "-", "-"
		if f.Failover.N > 0 {
			p50, p99, mx = fmtMS(f.Failover.P50), fmtMS(f.Failover.P99), fmtMS(f.Failover.Max)
		}
		proc := f.Proc
		if f.Leader != "" {
			proc = "leader " + f.Leader
		}
		ft.add(f.At.UTC().Format("15:04:05.0"), f.Kind, orDash(proc), fmtIDs(f.NodeIDs), lasted, f.Tasks, p50, p99, mx, strings.TrimSuffix(note, "; "))
	}
	ft.write(w, "  ")
	fmt.Fprintln(w)
	var tb table
	tb.add("fires", fmt.Sprintf("%d  (%.1f/s), start lag %s", r.Fires, r.FiresPerSec, r.Lag))
	if len(r.clockSteps) > 0 || r.StepFires > 0 {
		tb.add("", fmt.Sprintf("(lag on the database's clock; %d fires started while the nodes settled on a stepped clock are in the clock-step rows)", r.StepFires))
	}
	if r.EarlyFires > 0 {
		tb.add("early fires", fmt.Sprintf("%d  started more than %s before their fire time on the database's clock (earliest %s)", r.EarlyFires, fmtMS(ms(earlySlack)), fmtMS(r.EarliestMS)))
	}
	tb.add("failover (kill)", r.KillFailover.String())
	tb.add("failover (freeze)", r.FreezeFailover.String())
	tb.add("failover (all)", r.AllFailover.String()+fmt.Sprintf("  target p99 <= %s", fmtMS(r.FailoverBoundMS)))
	dup := fmt.Sprintf("%d  = %d allowed re-runs of interrupted fires + %d violations (%d of them during a PostgreSQL restart",
		r.Duplicates, r.AllowedReruns, r.Violations, r.PGDuplicates)
	lost := fmt.Sprintf("%d  (silent > %s outside PostgreSQL restarts); delayed by a PostgreSQL restart: %d", r.Lost, fmtMS(r.LostThresholdMS), r.PGDelayed)
	if len(r.clockSteps) > 0 {
		dup += fmt.Sprintf(", %d around a clock step", r.ClockDuplicates)
		lost += fmt.Sprintf("; held by a step back of the database's clock (silent <= threshold + step): %d", r.ClockHeld)
	}
	for _, k := range patroniKinds {
		if line, ok := r.patroniSummary(k); ok {
			tb.add(k, line)
		}
	}
	tb.add("duplicates", dup+")")
	if o := r.Overlap; o != nil {
		tb.add("overlap tasks", fmt.Sprintf("%d tasks, %d runs: %d at once with another run of their task, %d against their policy (%d pairs near a fault not judged)",
			o.Tasks, o.Runs, o.Concurrent, o.PolicyBroken, o.NearFault))
	}
	if d := r.DAG; d != nil {
		d.addLines(&tb)
	}
	tb.add("lost fires", lost)
	if r.FailoverLost > 0 || hasPatroniFault(r.Faults) {
		tb.add("not resumed", fmt.Sprintf("%d  (tasks without a fire within %s of the database accepting writes after a Patroni fault)", r.FailoverLost, fmtMS(r.LostThresholdMS)))
	}
	if r.ChainFires > 0 {
		tb.add("lost chain steps", r.lostStepsLine())
	}
	if r.HistoryError != "" {
		tb.add("unrecorded runs", "not checked: "+r.HistoryError)
	} else {
		tb.add("unrecorded runs", r.unrecordedLine())
	}
	tb.add("missed fire times", fmt.Sprintf("%d  (informational: fire times without a run; a late fire runs once per the misfire policy)", r.Missed))
	tb.add("fenced finishes", fmt.Sprintf("%d  (+ %d starts refused: claim lost)", r.FencedFinishes, r.StartLost))
	tb.add("recovered tasks", r.Recovered)
	tb.add("store errors", r.StoreErrors)
	tb.add("self exits", len(r.SelfExits))
	tb.add("processes", r.Incarnations)
	tb.write(w, "  ")
	for _, d := range r.DupDetails {
		if dupIsViolation(d.Class) {
			fmt.Fprintf(w, "\n  DUPLICATE (%s) %s @ %s %s\n", d.Class, d.Task, d.Sched, d.Because)
			for _, s := range d.Runs {
				fmt.Fprintln(w, "    "+s)
			}
		}
	}
	if o := r.Overlap; o != nil {
		for _, d := range o.Details {
			fmt.Fprintf(w, "\n  OVERLAP %s\n", d)
		}
	}
	if d := r.DAG; d != nil {
		for _, s := range d.Details {
			fmt.Fprintf(w, "\n  DAG %s\n", s)
		}
	}
	for _, l := range r.LostStepDetails {
		fmt.Fprintf(w, "\n  LOST CHAIN STEP %s @ %s (root ran: %s)\n", l.Step, l.Sched.Format("15:04:05"), l.Root)
	}
	shown, held := 0, 0
	for _, l := range r.LostDetails {
		if l.ClockBack {
			// A step back holds every task alike: one stands for all.
			if held++; held > 1 {
				continue
			}
		}
		if shown >= 20 {
			fmt.Fprintf(w, "\n  ... %d more silences in the JSON output\n", len(r.LostDetails)-shown)
			break
		}
		shown++
		kind := "LOST"
		switch {
		case l.PGWindow:
			kind = "delayed by PostgreSQL restart"
		case l.ClockBack:
			kind = fmt.Sprintf("held by a step back of the database's clock (%d such silences in all, each in the JSON output)", r.ClockHeld)
		}
		fmt.Fprintf(w, "\n  %s: %s silent %s (%s .. %s)\n", kind, l.Task, fmtMS(l.GapMS), l.From.UTC().Format("15:04:05.000"), l.To.UTC().Format("15:04:05.000"))
		if l.Before != "" {
			fmt.Fprintln(w, "    last before: "+l.Before)
		}
		if l.After != "" {
			fmt.Fprintln(w, "    first after: "+l.After)
		}
	}
	for _, e := range r.SelfExits {
		fmt.Fprintf(w, "\n  SELF EXIT %s at %s: %s\n", e.Proc, e.At.UTC().Format("15:04:05.000"), e.Status)
		for _, l := range e.LastLog {
			fmt.Fprintln(w, "    | "+l)
		}
	}
	fmt.Fprintln(w)
	if r.Failed {
		fmt.Fprintf(w, "FAIL: %s\n", strings.Join(r.FailureReasons, "; "))
	} else {
		fmt.Fprintln(w, "OK: no violation, no lost fire, no process exited on its own")
	}
	if r.Dir != "" {
		fmt.Fprintf(w, "ledgers and node logs kept in %s\n", r.Dir)
	}
}

// clockNote describes a clock-step fault: the step, the offset a query
// saw after it, and how the nodes' fires followed.
func (f *fault) clockNote() string {
	note := fmt.Sprintf("database clock %s", signedMS(f.StepMS))
	if f.SeenOffsetMS != nil {
		note += fmt.Sprintf(", then %s off the local one", signedMS(*f.SeenOffsetMS))
	}
	note += "; "
	if f.AfterStep.N > 0 {
		note += fmt.Sprintf("next fire of a task %s (p50) / %s (max) after the step; ", fmtMS(f.AfterStep.P50), fmtMS(f.AfterStep.Max))
	}
	if f.StepLag.N > 0 {
		note += fmt.Sprintf("%d fires while settling, start lag %s (min) / %s (p50) / %s (max) on the database's clock; ", f.StepLag.N, fmtMS(f.StepLag.Min), fmtMS(f.StepLag.P50), fmtMS(f.StepLag.Max))
	}
	return note
}

// signedMS is fmtMS with a sign on positive values too.
func signedMS(v float64) string {
	if v >= 0 {
		return "+" + fmtMS(v)
	}
	return fmtMS(v)
}

// patroniNote describes a Patroni fault: who took the writes and when,
// how the fires followed, and when the cluster was whole again.
func (f *fault) patroniNote() string {
	var note string
	if f.EtcdMember != "" {
		role := "a follower"
		if f.EtcdLeader {
			role = "the raft leader"
		}
		note += fmt.Sprintf("etcd member %s (%s) SIGKILLed, down %s; %d of %d write probes refused meanwhile; ", f.EtcdMember, role, fmtMS(ms(etcdDown)), f.WriteProbesFailed, f.WriteProbes)
		if f.Leader != "" && f.NewLeader == f.Leader {
			note += "Patroni kept its leader; "
		}
	}
	if !f.Until.IsZero() {
		note += fmt.Sprintf("writes accepted by %s after %s; ", f.NewLeader, fmtMS(ms(f.Until.Sub(f.At))))
	}
	if f.Resume.N > 0 {
		note += fmt.Sprintf("fires resumed %s (p50) / %s (max) after writes; ", fmtMS(f.Resume.P50), fmtMS(f.Resume.Max))
	}
	if f.Unjudged {
		note += "writes came back too late in the run to judge lost fires; "
	}
	note += fmt.Sprintf("%d not resumed, %d doubled (+%d allowed re-runs); ", f.LostTasks, f.Doubled, f.Reruns)
	if f.EtcdRejoinMS > 0 {
		note += fmt.Sprintf("etcd member healthy %s after its restart; ", fmtMS(f.EtcdRejoinMS))
	}
	if f.HealedMS > 0 {
		note += fmt.Sprintf("%d members again after %s; ", patroniMembers, fmtMS(f.HealedMS))
	}
	return note
}

// hasPatroniFault reports whether faults hold a Patroni fault.
func hasPatroniFault(faults []*fault) bool {
	for _, f := range faults {
		if isPatroniFault(f.Kind) {
			return true
		}
	}
	return false
}
