package harness

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// The overlap task set: tasks on every second whose runs last longer
// than a second, one per overlap policy in turn, so that every fire but
// the first overlaps a run. Each run is recorded as it ends (fire.End),
// and the analysis checks the policy on the runs: no two runs of one
// task at once, and what became of the fires due during a run; under
// allow_all (limit 2), every fire runs, never more than 2 at once.

// overlapRun is how long a run of an overlap task lasts (less, when its
// context ends: cancel, terminate).
const overlapRun = 1400 * time.Millisecond

// overlapPolicies are the policies the overlap tasks take in turn.
var overlapPolicies = []easyjob.OverlapPolicy{
	easyjob.OverlapSkip, easyjob.OverlapBufferOne, easyjob.OverlapBufferAll, easyjob.OverlapCancel, easyjob.OverlapTerminate,
	easyjob.OverlapAllowAll,
}

// allowAllLimit is the allow_all task's OverlapLimit: runs of 1.4 s every
// second never reach it, so every fire runs, two at once at most.
const allowAllLimit = 2

// overlapTaskName names overlap task i: "o03-cancel".
func overlapTaskName(i int) string {
	return fmt.Sprintf("o%02d-%s", i, overlapPolicies[i%len(overlapPolicies)])
}

// overlapPolicyOf is the policy of an overlap task's name, false for
// another task.
func overlapPolicyOf(task string) (easyjob.OverlapPolicy, bool) {
	if len(task) < 5 || task[0] != 'o' || task[3] != '-' {
		return "", false
	}
	return easyjob.OverlapPolicy(task[4:]), true
}

// registerOverlapTasks registers p.OverlapTasks overlap tasks on s.
func registerOverlapTasks(s *easyjob.Scheduler, p nodeParams, l ledger) error {
	for i := range p.OverlapTasks {
		name := overlapTaskName(i)
		policy := overlapPolicies[i%len(overlapPolicies)]
		opts := []easyjob.Option{easyjob.Overlap(policy)}
		switch policy {
		case easyjob.OverlapTerminate:
			opts = append(opts, easyjob.OverlapGrace(300*time.Millisecond))
		case easyjob.OverlapAllowAll:
			opts = append(opts, easyjob.OverlapLimit(allowAllLimit))
		}
		if err := s.Register(name, "* * * * * *", overlapJob(l), opts...); err != nil {
			return err
		}
	}
	return nil
}

// overlapJob runs for overlapRun or until its context ends, and records
// the run as it ends.
func overlapJob(l ledger) easyjob.Func {
	return func(ctx context.Context) error {
		f := fireFromContext(ctx)
		t := time.NewTimer(overlapRun)
		defer t.Stop()
		var err error
		select {
		case <-t.C:
		case <-ctx.Done():
			err = ctx.Err()
		}
		f.End = time.Now().UnixNano()
		l.record(f)
		return err
	}
}

// overlapSlack absorbs the clocks of one machine and the write of a
// finish between a run's end and the next run's start.
const overlapSlack = 50 * time.Millisecond

// overlapReport is the verdict on the overlap task set.
type overlapReport struct {
	Tasks int `json:"tasks"`
	Runs  int `json:"runs"`
	// Concurrent: two runs of one task at once, away from any fault.
	Concurrent int `json:"concurrent_runs"`
	// PolicyBroken: a run its task's policy should not have started (skip:
	// a fire due while the previous run ran; buffer_all: a fire left out;
	// buffer_one: a fire due before the previous run started; cancel and
	// terminate: a run that outlived the next fire).
	PolicyBroken int `json:"policy_violations"`
	// NearFault: pairs of runs not judged, as a fault struck around them.
	NearFault int      `json:"pairs_near_a_fault"`
	Details   []string `json:"details,omitempty"`
}

// Violations is what the run fails on.
func (o overlapReport) Violations() int { return o.Concurrent + o.PolicyBroken }

// analyzeOverlaps judges the overlap tasks' runs, in start order, pair by
// pair; a pair a fault struck around (near) is not judged.
func analyzeOverlaps(byTask map[string][]fire, near func(prev, x fire) bool) overlapReport {
	var r overlapReport
	names := make([]string, 0, len(byTask))
	for name := range byTask {
		if _, ok := overlapPolicyOf(name); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	slack := int64(overlapSlack)
	for _, name := range names {
		policy, _ := overlapPolicyOf(name)
		runs := byTask[name]
		r.Tasks++
		r.Runs += len(runs)
		for i := 1; i < len(runs); i++ {
			prev, x := runs[i-1], runs[i]
			if near(prev, x) {
				r.NearFault++
				continue
			}
			bad := ""
			switch {
			case policy == easyjob.OverlapAllowAll:
				bad = allowAllPair(runs, i)
				if strings.HasPrefix(bad, "ran while") {
					r.Concurrent++
				}
			case x.Start < prev.End-slack:
				r.Concurrent++
				bad = "ran while the previous run still ran"
			case policy == easyjob.OverlapSkip && x.Sched < prev.End-slack && x.Sched > prev.Start:
				bad = "is a fire due while the previous run ran: skip drops it"
			case policy == easyjob.OverlapBufferAll && x.Sched != prev.Sched+int64(time.Second):
				bad = fmt.Sprintf("is not the fire after the previous run's (%s): buffer_all runs every one", stampNS(prev.Sched))
			case policy == easyjob.OverlapBufferOne && x.Sched < prev.Start-int64(time.Second):
				bad = "was due before the previous run began: buffer_one keeps only the first due during a run"
			case (policy == easyjob.OverlapCancel || policy == easyjob.OverlapTerminate) && prev.End-prev.Start > int64(overlapRun)-slack:
				bad = "followed a run that ran its full length: the next fire should have cancelled it"
			}
			if bad == "" {
				continue
			}
			if !strings.HasPrefix(bad, "ran while") {
				r.PolicyBroken++
			}
			if len(r.Details) < 30 {
				r.Details = append(r.Details, fmt.Sprintf("%s: the run of %s (node %d, %s..%s) %s", name, stampNS(x.Sched), x.Node,
					stampNS(x.Start), stampNS(x.End), bad))
			}
		}
	}
	return r
}

// allowAllPair judges run i of an allow_all task against the runs before
// it: it did not start while allowAllLimit runs of its node still ran
// (the limit is per node: a frozen node's runs do not count on the node
// that took the task over), and each fire between the previous run's and
// its own was skipped at the limit (allowAllLimit runs going on, then, on
// the node of one of the two) or folded into the previous run by the
// misfire policy (it was due when that run started late: a recovery).
func allowAllPair(runs []fire, i int) string {
	x, prev := runs[i], runs[i-1]
	if going := goingOn(runs[:i], x.Node, x.Start+int64(overlapSlack)); going >= allowAllLimit {
		return fmt.Sprintf("ran while %d runs of its node still ran: over its limit of %d", going, allowAllLimit)
	}
	for m := prev.Sched + int64(time.Second); m < x.Sched; m += int64(time.Second) {
		folded := prev.Start >= m
		if !folded && goingOn(runs[:i], prev.Node, m) < allowAllLimit && goingOn(runs[:i], x.Node, m) < allowAllLimit {
			return fmt.Sprintf("came after a gap: the fire of %s did not run, below the limit of %d", stampNS(m), allowAllLimit)
		}
	}
	return ""
}

// goingOn counts the runs of node that began before at and ended after it.
func goingOn(runs []fire, node, at int64) int {
	k := 0
	for _, r := range runs {
		if r.Node == node && r.Start < at && r.End > at {
			k++
		}
	}
	return k
}

func stampNS(ns int64) string { return time.Unix(0, ns).UTC().Format("15:04:05.000") }
