package harness

import (
	"strings"
	"testing"
	"time"
)

// dagLedger builds the ledger of a clean run of the DAG set over fires
// 1..n (a second apart from base): each step after its parents, with
// their results; dag-all on nodes 1 and 2; the daemon on node 1.
type dagLedger struct {
	base  time.Time
	fires []fire
}

func (l *dagLedger) at(s float64) int64 {
	return l.base.Add(time.Duration(s * float64(time.Second))).UnixNano()
}

// run records a run of task for fire s on node (proc = node-1), from
// s+begin to s+begin+20ms, with results parent results.
func (l *dagLedger) run(task string, s int, node int64, begin float64, results int) {
	l.fires = append(l.fires, fire{Task: task, Sched: l.at(float64(s)), Node: node, Proc: int(node - 1), Attempt: 1,
		Start: l.at(float64(s) + begin), End: l.at(float64(s) + begin + 0.02), Exec: int64(results)})
}

// daemon records the beats of an incarnation on node from a to b.
func (l *dagLedger) daemon(node int64, start float64, spans ...[2]float64) {
	for _, sp := range spans {
		for t := sp[0]; t <= sp[1]+1e-9; t += 0.1 {
			l.fires = append(l.fires, fire{Task: dagDaemon, Sched: l.at(start), Node: node, Proc: int(node - 1), Start: l.at(start), End: l.at(t)})
		}
	}
}

func (l *dagLedger) fire(s int) {
	l.run("dag-a", s, 1, 0.01, 0)
	l.run("dag-b", s, 2, 0.05, 1)
	l.run("dag-c", s, 3, 0.05, 1)
	l.run("dag-d", s, 1, 0.1, 2)
	l.run("dag-f", s, 2, 0.01, 0)
	for i := range dagFanOut {
		l.run("dag-f"+string(rune('0'+i)), s, int64(1+i%3), 0.05, 1)
	}
	l.run("dag-fj", s, 3, 0.1, dagFanOut)
	for i := range dagShards {
		l.run(shardName(dagShardRoot, i), s, int64(1+i%3), 0.01+0.001*float64(i), 0)
	}
	l.run(dagReduce, s, 2, 0.1, dagShards)
	l.run(dagBroadcast, s, 1, 0.01, 0)
	l.run(dagBroadcast, s, 2, 0.01, 0)
}

// drop removes the runs of task for fire s.
func (l *dagLedger) drop(task string, s int) {
	out := l.fires[:0]
	for _, f := range l.fires {
		if f.Task != task || f.Sched != l.at(float64(s)) {
			out = append(out, f)
		}
	}
	l.fires = out
}

// TestAnalyzeDAG: a clean ledger passes (broadcast runs on two nodes are
// not duplicates, the daemon's beats not fires), and each kind of
// violation planted in it is caught, once.
func TestAnalyzeDAG(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p := nodeParams{Cron: "* * * * * *", DAG: true}
	from, to := base.Add(1500*time.Millisecond), base.Add(44*time.Second) // steps checked up to 38 s (lost-fire threshold 6 s)
	analyze := func(l *dagLedger, faults ...*fault) *chaosResult {
		res := &chaosResult{procNames: []string{"p0.0", "p1.0", "p2.0"}, Faults: faults}
		analyzeChaos(res, l.fires, p, from, to, 6*time.Second)
		if res.DAG == nil {
			t.Fatal("no DAG verdict")
		}
		return res
	}

	clean := &dagLedger{base: base}
	for s := 1; s <= 45; s++ {
		clean.fire(s)
	}
	clean.daemon(1, 0.5, [2]float64{0.5, 45})
	res := analyze(clean)
	if d := res.DAG; d.Violations() != 0 || res.Violations != 0 || d.RootFires != 3*37 || d.Reduces != 45 || d.BroadcastRuns != 90 ||
		d.DaemonIncarnations != 1 || d.OverlapMaxS != 0 || d.GapMaxS > 0.11 {
		t.Fatalf("clean ledger: %d DAG violations, %d duplicates: %+v", d.Violations(), res.Violations, d)
	}

	l := &dagLedger{base: base}
	for s := 1; s <= 45; s++ {
		l.fire(s)
	}
	l.drop("dag-d", 3)                    // a lost step
	l.drop(shardName(dagShardRoot, 5), 4) // a lost shard (and the reduce after it, which waits for it)
	l.drop(dagReduce, 4)
	l.run("dag-b", 5, 3, 0.5, 1) // run again, no fault
	l.run("dag-c", 6, 1, 3, 1)   // run again after a kill of node 3 (below): allowed
	l.drop("dag-fj", 7)
	l.run("dag-fj", 7, 1, 0.06, dagFanOut) // begun before dag-f0 .. dag-f7 of 7 ended (7.07): one run
	l.drop(dagReduce, 8)
	l.run(dagReduce, 8, 2, 0.1, dagShards-1) // a shard's result missing
	l.run(dagBroadcast, 9, 2, 0.5, 0)        // twice on node 2
	l.drop("dag-f", 10)                      // dag-f0 .. dag-f7 of 10 ran without it: 8
	for s := 20; s <= 28; s++ {
		l.drop(dagBroadcast, s) // silent 9 s
	}
	// The daemon: node 1 frozen from 20 to 26 s, node 2 alive beside it
	// from 10 to 16 s (6 s at once: over the tolerance), then from 24.5
	// to 30 s (0.5 s beside node 1 resumed); none from 30 to 38 s.
	l.daemon(1, 0.5, [2]float64{0.5, 20}, [2]float64{26, 26.5})
	l.daemon(2, 10, [2]float64{10, 16})
	l.daemon(2, 24.5, [2]float64{24.5, 30})
	l.daemon(3, 38, [2]float64{38, 45})
	res = analyze(l, &fault{Kind: "kill", At: base.Add(6080 * time.Millisecond), idx: 2})
	d := res.DAG
	want := dagReport{LostSteps: 1, LostShards: 1, Doubled: 1, AllowedReruns: 1, BeforeParents: 1, WithoutParent: dagFanOut,
		BadResults: 1, BroadcastDoubled: 1, Silent: 1, OverlapsOver: 1, GapsOver: 1}
	got := dagReport{LostSteps: d.LostSteps, LostShards: d.LostShards, Doubled: d.Doubled, AllowedReruns: d.AllowedReruns,
		BeforeParents: d.BeforeParents, WithoutParent: d.WithoutParent, BadResults: d.BadResults, BroadcastDoubled: d.BroadcastDoubled,
		Silent: d.Silent, OverlapsOver: d.OverlapsOver, GapsOver: d.GapsOver}
	if !equalReports(got, want) {
		t.Errorf("violations %+v;\nwant %+v\ndetails:\n%s", got, want, strings.Join(d.Details, "\n"))
	}
	if d.DaemonIncarnations != 4 || d.OverlapMaxS < 5.9 || d.OverlapMaxS > 6.1 || d.OverlapTotalS < 6.4 || d.OverlapTotalS > 6.6 || d.GapMaxS < 7.8 || d.GapMaxS > 8.0 {
		t.Errorf("daemon: %d incarnations, overlap max %.3f s total %.3f s, gap max %.3f s; want 4, 6, 6.5, 7.9", d.DaemonIncarnations, d.OverlapMaxS, d.OverlapTotalS, d.GapMaxS)
	}
	if res.Violations != 0 {
		t.Errorf("the DAG set's runs counted among the bench tasks' duplicates: %d", res.Violations)
	}
	var b strings.Builder
	res.print(&b)
	for _, line := range []string{"DAG steps", "DAG broadcast", "DAG daemon", "DAG shard dag-s[5] of the fire"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, b.String())
		}
	}
}

// equalReports compares the violation counts of two reports.
func equalReports(a, b dagReport) bool {
	return a.LostSteps == b.LostSteps && a.LostShards == b.LostShards && a.Doubled == b.Doubled && a.AllowedReruns == b.AllowedReruns &&
		a.BeforeParents == b.BeforeParents && a.WithoutParent == b.WithoutParent && a.BadResults == b.BadResults &&
		a.BroadcastDoubled == b.BroadcastDoubled && a.Silent == b.Silent && a.OverlapsOver == b.OverlapsOver && a.GapsOver == b.GapsOver
}
