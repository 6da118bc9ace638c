package harness

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// dagBeatGap is the silence between two of the daemon's heartbeats past
// which its process counts as not running meanwhile (frozen): its beats
// come every dagBeat.
const dagBeatGap = time.Second

// dagReport is the verdict on the DAG task set (chaos --dag).
type dagReport struct {
	RootFires int `json:"root_fires_checked"` // fires of dag-a, dag-f and dag-s in the window
	Runs      int `json:"runs"`               // runs of the set's tasks but the daemon
	// LostSteps / LostShards: a step (a shard) of a checked fire that
	// never ran though its parents did; Delayed: one whose fire a database
	// outage ending too late in the run held back (not judged).
	LostSteps  int `json:"lost_steps"`
	LostShards int `json:"lost_shards"`
	Delayed    int `json:"steps_held_by_an_outage_at_the_end"`
	// AllowedReruns: a fire of a task run again after a kill or freeze of
	// the first run's node; Doubled: run again with no fault to explain it.
	AllowedReruns int `json:"allowed_reruns"`
	Doubled       int `json:"doubled"`
	// BeforeParents: a step run begun before every run of one of its
	// parents for the fire had ended; WithoutParent: one with no run of a
	// parent for its fire.
	BeforeParents int `json:"began_before_parents_ended"`
	WithoutParent int `json:"ran_without_a_parent_run"`
	// BadResults: a step run whose ParentResults did not hold one result
	// of its fire per parent; Unread: runs that could not read them
	// during a database outage (not judged).
	BadResults int `json:"wrong_parent_results"`
	Unread     int `json:"parent_results_unread_in_outage"`
	Reduces    int `json:"reduces_with_all_shard_results"`
	// Silent: dag-a, dag-f or dag-all silent past the lost-fire threshold
	// outside a database outage.
	Silent           int `json:"roots_silent"`
	BroadcastRuns    int `json:"broadcast_runs"`
	BroadcastFires   int `json:"broadcast_fires"`
	BroadcastDoubled int `json:"broadcast_twice_on_a_node"`
	// The daemon: its incarnations; time two were alive at once (their
	// beats), at most and in all, and the overlaps longer than the
	// failover target; the longest time none was alive inside the
	// window, the gaps longer than the lost-fire threshold outside a
	// database outage (violations) and within one.
	DaemonIncarnations int      `json:"daemon_incarnations"`
	OverlapMaxS        float64  `json:"daemon_overlap_max_s"`
	OverlapTotalS      float64  `json:"daemon_overlap_total_s"`
	OverlapsOver       int      `json:"daemon_overlaps_over_tolerance"`
	OverlapToleranceS  float64  `json:"daemon_overlap_tolerance_s"`
	GapMaxS            float64  `json:"daemon_gap_max_s"`
	GapsOver           int      `json:"daemon_gaps_over_bound"`
	GapsInOutage       int      `json:"daemon_gaps_in_db_outage"`
	GapBoundS          float64  `json:"daemon_gap_bound_s"`
	Details            []string `json:"details,omitempty"`
}

// Violations is what the run fails on.
func (d *dagReport) Violations() int {
	return d.LostSteps + d.LostShards + d.Doubled + d.BeforeParents + d.WithoutParent + d.BadResults +
		d.Silent + d.BroadcastDoubled + d.OverlapsOver + d.GapsOver
}

func (d *dagReport) detail(format string, args ...any) {
	if len(d.Details) < 40 {
		d.Details = append(d.Details, fmt.Sprintf(format, args...))
	}
}

// dagStep is a task of the set as the ledger sees it: its runs' parents
// in the ledger (a shard's is its task's own row, which records nothing)
// and the root whose fires it follows.
type dagStep struct {
	name, root string
	parents    []string
	shard      bool
}

// dagLedgerSteps lists the steps of the set, the shards as theirs.
func dagLedgerSteps() []dagStep {
	root := map[string]string{}
	var out []dagStep
	for _, t := range dagTasks() {
		switch {
		case t.shards > 0:
			for i := range t.shards {
				out = append(out, dagStep{name: shardName(t.name, i), root: t.name, shard: true})
				root[shardName(t.name, i)] = t.name
			}
			root[t.name] = t.name
		case len(t.parents) == 0:
			root[t.name] = t.name
		default:
			s := dagStep{name: t.name, root: root[t.parents[0]]}
			for _, p := range t.parents {
				if p == dagShardRoot {
					for i := range dagShards {
						s.parents = append(s.parents, shardName(p, i))
					}
					continue
				}
				s.parents = append(s.parents, p)
			}
			root[t.name] = s.root
			out = append(out, s)
		}
	}
	return out
}

// analyzeDAG judges the DAG set's runs (byTask: by start); fires of a
// root are checked when scheduled in [from, to]; the daemon is judged
// over [from, daemonTo]. overlapTol is how long two daemon instances may
// live at once (a frozen node's, until it finds itself fenced), gapBound
// how long none may.
func (res *chaosResult) analyzeDAG(byTask map[string][]fire, from, to, daemonTo time.Time, overlapTol, gapBound time.Duration) *dagReport {
	d := &dagReport{OverlapToleranceS: overlapTol.Seconds(), GapBoundS: gapBound.Seconds()}
	runs := map[string]map[int64][]fire{} // task -> fire -> runs
	for task, fs := range byTask {
		if task == dagDaemon {
			continue
		}
		runs[task] = map[int64][]fire{}
		for _, f := range fs {
			runs[task][f.Sched] = append(runs[task][f.Sched], f)
		}
		d.Runs += len(fs)
	}
	res.dagReruns(d, runs)
	res.dagSteps(d, runs, from, to)
	res.dagBroadcast(d, runs[dagBroadcast])
	res.dagDaemon(d, byTask[dagDaemon], from, daemonTo, overlapTol, gapBound)
	sub := &chaosResult{pgWindows: res.pgWindows, clockSteps: res.clockSteps, stepSettle: res.stepSettle, procNames: res.procNames}
	sub.findLost([]string{"dag-a", "dag-f", dagBroadcast}, byTask, from, daemonTo, gapBound)
	d.Silent = sub.Lost
	for _, l := range sub.LostDetails {
		if !l.PGWindow && !l.ClockBack {
			d.detail("%s silent %s (%s .. %s)", l.Task, fmtMS(l.GapMS), l.From.UTC().Format("15:04:05.000"), l.To.UTC().Format("15:04:05.000"))
		}
	}
	return d
}

// dagReruns classifies each fire of a task run more than once (the
// broadcast task apart: once per node) as a re-run of an interrupted fire
// or a violation.
func (res *chaosResult) dagReruns(d *dagReport, runs map[string]map[int64][]fire) {
	for _, task := range slices.Sorted(maps.Keys(runs)) {
		if task == dagBroadcast {
			continue
		}
		byFire := runs[task]
		for _, sched := range slices.Sorted(maps.Keys(byFire)) {
			fs := byFire[sched]
			if len(fs) < 2 {
				continue
			}
			sort.Slice(fs, func(i, j int) bool { return fs[i].Start < fs[j].Start })
			if class, _ := res.rerunCause(fs[0]); class != "" {
				d.AllowedReruns += len(fs) - 1
				continue
			}
			d.Doubled += len(fs) - 1
			var s []string
			for _, f := range fs {
				s = append(s, fmtRun(f, res.procName))
			}
			d.detail("%s @ %s ran %d times, no kill or freeze of the first run's node to explain it: %s", task, fmtTime(sched), len(fs), strings.Join(s, "; "))
		}
	}
}

// fmtRun prints a run of the DAG set: node, process, begin and end.
func fmtRun(f fire, procName func(int) string) string {
	return fmt.Sprintf("node %d (%s) %s..%s", f.Node, procName(f.Proc), fmtTime(f.Start), fmtTime(f.End))
}

// dagFires lists the fires of root scheduled in [from, to]: its runs',
// or, for the sharded task, whose own row records nothing, its history's
// and the fires its shards and its reduce ran for.
func (res *chaosResult) dagFires(root string, runs map[string]map[int64][]fire, from, to time.Time) []int64 {
	set := map[int64]bool{}
	for s := range runs[root] {
		set[s] = true
	}
	if root == dagShardRoot {
		for k := range res.history {
			if k.task == root {
				set[k.sched*1e3] = true
			}
		}
		for i := range dagShards {
			for s := range runs[shardName(root, i)] {
				set[s] = true
			}
		}
		for s := range runs[dagReduce] {
			set[s] = true
		}
	}
	var out []int64
	for s := range set {
		if s >= from.UnixNano() && s <= to.UnixNano() {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// dagSteps checks every step of every checked fire: it ran (unless a
// parent did not), after its parents ended, with their results.
func (res *chaosResult) dagSteps(d *dagReport, runs map[string]map[int64][]fire, from, to time.Time) {
	steps := dagLedgerSteps()
	fires := map[string][]int64{}
	for _, root := range []string{"dag-a", "dag-f", dagShardRoot} {
		fires[root] = res.dagFires(root, runs, from, to)
		d.RootFires += len(fires[root])
	}
	for _, s := range steps {
		for _, sched := range fires[s.root] {
			if len(runs[s.name][sched]) > 0 {
				continue
			}
			parentsRan := true
			for _, p := range s.parents {
				parentsRan = parentsRan && len(runs[p][sched]) > 0
			}
			switch {
			case !parentsRan: // the parent's loss is the one counted
			case res.heldPastEnd(sched, to):
				d.Delayed++
			case s.shard:
				d.LostShards++
				d.detail("shard %s of the fire %s never ran", s.name, fmtTime(sched))
			default:
				d.LostSteps++
				d.detail("step %s of the fire %s never ran though its parents did", s.name, fmtTime(sched))
			}
		}
		// Every run of the step, in the window or not: its parents.
		for _, sched := range slices.Sorted(maps.Keys(runs[s.name])) {
			for _, x := range runs[s.name][sched] {
				res.dagStepRun(d, s, x, sched, runs)
			}
		}
	}
}

// dagStepRun judges one run x of step s for the fire sched against its
// parents' runs.
func (res *chaosResult) dagStepRun(d *dagReport, s dagStep, x fire, sched int64, runs map[string]map[int64][]fire) {
	var missing, running []string
	for _, p := range s.parents {
		ps := runs[p][sched]
		if len(ps) == 0 {
			missing = append(missing, p)
			continue
		}
		first := ps[0]
		for _, r := range ps[1:] {
			if r.End < first.End {
				first = r
			}
		}
		if x.Start < first.End {
			running = append(running, fmt.Sprintf("%s until %s later (%s)", p, fmtMS(ms(time.Duration(first.End-x.Start))), fmtRun(first, res.procName)))
		}
	}
	if len(missing) > 0 {
		d.WithoutParent++
		d.detail("%s @ %s ran (%s) with no run of its parents %s for that fire", s.name, fmtTime(sched), fmtRun(x, res.procName), strings.Join(missing, ", "))
	}
	if len(running) > 0 {
		d.BeforeParents++
		d.detail("%s @ %s began (%s) before its parents ended: %s", s.name, fmtTime(sched), fmtRun(x, res.procName), strings.Join(running, "; "))
	}
	switch {
	case x.Exec == dagResultsUnread && res.inPG(x.Start, x.End):
		d.Unread++
	case int(x.Exec) != len(s.parents):
		d.BadResults++
		d.detail("%s @ %s (%s) got %d results of its fire from its parents; want %d", s.name, fmtTime(sched), fmtRun(x, res.procName), x.Exec, len(s.parents))
	case s.name == dagReduce:
		d.Reduces++
	}
}

// heldPastEnd reports whether a database outage that met the fire sched
// ended too late for its steps to run before to.
func (res *chaosResult) heldPastEnd(sched int64, to time.Time) bool {
	for _, w := range res.pgWindows {
		if sched <= w[1].UnixNano() && sched >= w[0].UnixNano()-int64(time.Minute) && w[1].After(to) {
			return true
		}
	}
	return false
}

// dagBroadcast checks that no node ran a fire of the broadcast task twice.
func (res *chaosResult) dagBroadcast(d *dagReport, byFire map[int64][]fire) {
	for sched, fs := range byFire {
		d.BroadcastFires++
		d.BroadcastRuns += len(fs)
		seen := map[int64]fire{}
		for _, f := range fs {
			if g, twice := seen[f.Node]; twice {
				d.BroadcastDoubled++
				d.detail("%s @ %s ran twice on node %d: %s and %s", dagBroadcast, fmtTime(sched), f.Node, fmtRun(g, res.procName), fmtRun(f, res.procName))
			}
			seen[f.Node] = f
		}
	}
}

// daemonLife is one incarnation of the daemon: its node, and the spans
// its beats show it alive (split where it was frozen).
type daemonLife struct {
	node  int64
	proc  int
	spans [][2]int64
}

// daemonLives groups the daemon's beats by incarnation (node and start).
func daemonLives(beats []fire) []*daemonLife {
	type key struct{ node, start int64 }
	by := map[key][]int64{}
	procs := map[key]int{}
	for _, b := range beats {
		k := key{b.Node, b.Start}
		by[k] = append(by[k], b.End)
		procs[k] = b.Proc
	}
	var out []*daemonLife
	for k, ends := range by {
		sort.Slice(ends, func(i, j int) bool { return ends[i] < ends[j] })
		l := &daemonLife{node: k.node, proc: procs[k]}
		span := [2]int64{k.start, k.start}
		for _, e := range ends {
			if e-span[1] > int64(dagBeatGap) {
				l.spans = append(l.spans, span)
				span = [2]int64{e, e}
			}
			span[1] = e
		}
		l.spans = append(l.spans, span)
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].spans[0][0] < out[j].spans[0][0] })
	return out
}

// dagDaemon judges the daemon's beats over [from, to]: two incarnations
// alive at once for longer than overlapTol, none alive for longer than
// gapBound outside a database outage.
func (res *chaosResult) dagDaemon(d *dagReport, beats []fire, from, to time.Time, overlapTol, gapBound time.Duration) {
	lives := daemonLives(beats)
	d.DaemonIncarnations = len(lives)
	var all [][2]int64
	for i, a := range lives {
		all = append(all, a.spans...)
		for _, b := range lives[i+1:] {
			var both int64
			for _, x := range a.spans {
				for _, y := range b.spans {
					both += max(0, min(x[1], y[1])-max(x[0], y[0]))
				}
			}
			if both == 0 {
				continue
			}
			s := time.Duration(both).Seconds()
			d.OverlapTotalS += s
			d.OverlapMaxS = max(d.OverlapMaxS, s)
			if time.Duration(both) > overlapTol {
				d.OverlapsOver++
				d.detail("%s alive on node %d (%s) and node %d (%s) at once for %s (tolerance %s)", dagDaemon,
					a.node, res.procName(a.proc), b.node, res.procName(b.proc), fmtMS(ms(time.Duration(both))), fmtMS(ms(overlapTol)))
			}
		}
	}
	// The gaps: the time inside [from, to] no span covers.
	sort.Slice(all, func(i, j int) bool { return all[i][0] < all[j][0] })
	lo, hi := from.UnixNano(), to.UnixNano()
	gap := func(a, b int64) {
		if b <= a {
			return
		}
		g := time.Duration(b - a)
		d.GapMaxS = max(d.GapMaxS, g.Seconds())
		switch {
		case g <= gapBound:
		case res.inPG(a, b):
			d.GapsInOutage++
		default:
			d.GapsOver++
			d.detail("%s alive nowhere for %s (%s .. %s; bound %s)", dagDaemon, fmtMS(ms(g)), fmtTime(a), fmtTime(b), fmtMS(ms(gapBound)))
		}
	}
	covered := lo
	for _, s := range all {
		if s[0] > hi {
			break
		}
		if s[0] > covered {
			gap(covered, s[0])
		}
		covered = max(covered, s[1])
	}
	gap(covered, hi)
}

// violationList names the kinds of violation found, for the failure
// reason.
func (d *dagReport) violationList() string {
	var out []string
	for _, v := range []struct {
		n    int
		what string
	}{
		{d.LostSteps, "lost steps"}, {d.LostShards, "lost shards"}, {d.Doubled, "runs again without a fault"},
		{d.BeforeParents, "steps begun before a parent ended"}, {d.WithoutParent, "steps without a parent run"},
		{d.BadResults, "wrong parent results"}, {d.Silent, "roots silent"}, {d.BroadcastDoubled, "broadcast runs twice on a node"},
		{d.OverlapsOver, "daemon overlaps over tolerance"}, {d.GapsOver, "daemon gaps over bound"},
	} {
		if v.n > 0 {
			out = append(out, fmt.Sprintf("%d %s", v.n, v.what))
		}
	}
	return strings.Join(out, ", ")
}

// addLines adds the report's lines about the DAG set to tb.
func (d *dagReport) addLines(tb *table) {
	tb.add("DAG steps", fmt.Sprintf("%d root fires, %d runs: %d lost steps, %d lost shards, %d run again without a fault (+ %d allowed re-runs), %d begun before a parent ended, %d without a parent run, %d with wrong parent results, %d roots silent; %d reduces with all %d shard results (%d held by an outage at the end, %d results unread in an outage)",
		d.RootFires, d.Runs, d.LostSteps, d.LostShards, d.Doubled, d.AllowedReruns, d.BeforeParents, d.WithoutParent, d.BadResults, d.Silent,
		d.Reduces, dagShards, d.Delayed, d.Unread))
	tb.add("DAG broadcast", fmt.Sprintf("%d runs of %d fires, %d twice on one node", d.BroadcastRuns, d.BroadcastFires, d.BroadcastDoubled))
	tb.add("DAG daemon", fmt.Sprintf("%d incarnations; two alive at once %ss at most, %ss in all (%d over %ss); alive nowhere %ss at most (%d over %ss, %d in a database outage)",
		d.DaemonIncarnations, fmtS(d.OverlapMaxS), fmtS(d.OverlapTotalS), d.OverlapsOver, fmtS(d.OverlapToleranceS),
		fmtS(d.GapMaxS), d.GapsOver, fmtS(d.GapBoundS), d.GapsInOutage))
}

// fmtS prints seconds with milliseconds.
func fmtS(s float64) string { return fmt.Sprintf("%.3f", s) }
