package harness

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// earlySlack is how much earlier than its fire time, on the database's
// clock, a fire may start before it counts as early: the nodes' offset
// estimate is bounded by a round trip.
const earlySlack = 50 * time.Millisecond

// analyzeChaos fills failover, duplicates, lost fires from the ledger.
func analyzeChaos(res *chaosResult, fires []fire, p nodeParams, from, to time.Time, lostAfter time.Duration) {
	// Node ids per incarnation, from its fires.
	ids := map[int]map[int64]bool{}
	for _, f := range fires {
		if ids[f.Proc] == nil {
			ids[f.Proc] = map[int64]bool{}
		}
		ids[f.Proc][f.Node] = true
	}
	hb, dead, _ := p.effective()
	res.stepSettle = dead + hb
	byTask := map[string][]fire{}
	overlapping := map[string][]fire{} // the overlap task set's runs, judged apart (overlap.go)
	dag := map[string][]fire{}         // the DAG set's, likewise (chaosdagverdict.go)
	plain := make([]fire, 0, len(fires))
	var lags []time.Duration
	for _, f := range fires {
		if isDagTask(f.Task) {
			dag[f.Task] = append(dag[f.Task], f)
			continue
		}
		plain = append(plain, f)
		if _, ok := overlapPolicyOf(f.Task); ok {
			overlapping[f.Task] = append(overlapping[f.Task], f)
			continue
		}
		byTask[f.Task] = append(byTask[f.Task], f)
		// The lag is measured on the database's clock, which a clock step
		// moved away from the local one, and the fires the nodes start
		// while they settle on a stepped clock are judged per step.
		lag := res.dbLag(f)
		if lag < -earlySlack {
			res.EarlyFires++
			res.EarliestMS = min(res.EarliestMS, ms(lag))
		}
		if res.settlingAfterStep(f.Start) {
			res.StepFires++
			continue
		}
		lags = append(lags, lag)
	}
	res.Lag = summarize(lags)
	for _, fs := range byTask {
		sort.Slice(fs, func(i, j int) bool { return fs[i].Start < fs[j].Start })
	}
	res.analyzeClockSteps(byTask)
	tasks := p.taskNames()
	if exp, err := cronTimes(p.Cron, from, to); err == nil {
		res.Missed = analyzeSteady(fires, tasks, exp, from, to).Missed
	}
	res.analyzeFailovers(ids, byTask)
	res.analyzeResumes(byTask)
	res.analyzePatroniFaults(tasks, byTask, to, lostAfter)
	res.classifyDuplicates(plain)
	res.findLost(tasks, byTask, from, to, lostAfter)
	res.findLostSteps(p, byTask, from, to.Add(-lostAfter))
	if p.OverlapTasks > 0 {
		for _, fs := range overlapping {
			sort.Slice(fs, func(i, j int) bool { return fs[i].Start < fs[j].Start })
		}
		o := analyzeOverlaps(overlapping, func(prev, x fire) bool { return res.nearFault(prev, x, dead+hb) })
		res.Overlap = &o
	}
	if p.DAG {
		for _, fs := range dag {
			sort.Slice(fs, func(i, j int) bool { return fs[i].Start < fs[j].Start })
		}
		_, _, rec := p.effective()
		res.DAG = res.analyzeDAG(dag, from, to.Add(-lostAfter), to, dead+rec+500*time.Millisecond, lostAfter)
	}
}

// nearFault reports whether a fault struck around the pair of runs prev,
// x: its window, widened by settle after it ends (a node that comes
// back, or a peer that takes its tasks over, acts within that), meets
// [prev's start, the later end], and it hit one of their nodes (a kill or
// a freeze) or every node (the database's faults).
func (res *chaosResult) nearFault(prev, x fire, settle time.Duration) bool {
	a, b := prev.Start, max(prev.End, x.End, x.Start)
	for _, f := range res.Faults {
		until := f.Until
		if until.IsZero() || until.Before(f.At) {
			until = f.At
		}
		if a > until.Add(settle+2*time.Second).UnixNano() || b < f.At.Add(-2*time.Second).UnixNano() {
			continue
		}
		if len(f.NodeIDs) == 0 || slices.Contains(f.NodeIDs, prev.Node) || slices.Contains(f.NodeIDs, x.Node) {
			return true
		}
	}
	return false
}

// procName names process incarnation i ("?" if unknown).
func (res *chaosResult) procName(i int) string {
	if i >= 0 && i < len(res.procNames) {
		return res.procNames[i]
	}
	return "?"
}

// inPG reports whether [a, b] (unix nanos) meets a PostgreSQL restart.
func (res *chaosResult) inPG(a, b int64) bool {
	for _, w := range res.pgWindows {
		if a <= w[1].UnixNano() && b >= w[0].UnixNano() {
			return true
		}
	}
	return false
}

// analyzeFailovers measures, per fault, how long each task whose last
// fire was on the faulty node took to fire elsewhere; ids are the node ids
// of each incarnation, byTask the fires of each task by start.
func (res *chaosResult) analyzeFailovers(ids map[int]map[int64]bool, byTask map[string][]fire) {
	for _, f := range res.Faults {
		if !f.downsNode() {
			continue // no node: idx is not an incarnation's
		}
		for id := range ids[f.idx] {
			f.NodeIDs = append(f.NodeIDs, id)
		}
		sort.Slice(f.NodeIDs, func(i, j int) bool { return f.NodeIDs[i] < f.NodeIDs[j] })
		at := f.At.UnixNano()
		for _, fs := range byTask {
			i := sort.Search(len(fs), func(i int) bool { return fs[i].Start > at })
			if i == 0 || fs[i-1].Proc != f.idx {
				continue
			}
			f.Tasks++
			switch {
			case i == len(fs):
				f.NotFailedOver++
			case fs[i].Proc == f.idx:
				f.ResumedOnSelf++
			default:
				f.failovers = append(f.failovers, time.Duration(fs[i].Start-at))
			}
		}
		f.Failover = summarize(f.failovers)
		switch f.Kind {
		case "kill":
			res.killFailovers = append(res.killFailovers, f.failovers...)
		case "freeze":
			res.freezeFailovers = append(res.freezeFailovers, f.failovers...)
		}
	}
	res.KillFailover = summarize(res.killFailovers)
	res.FreezeFailover = summarize(res.freezeFailovers)
	res.AllFailover = summarize(append(append([]time.Duration(nil), res.killFailovers...), res.freezeFailovers...))

}

// classifyDuplicates sorts every (task, scheduled time) run more than once
// into an allowed re-run of a fire its node was killed or frozen in, or a
// violation.
func (res *chaosResult) classifyDuplicates(fires []fire) {
	for _, d := range duplicates(fires) {
		first := d.Runs[0]
		class, because := res.rerunCause(first)
		if class == "" {
			class = "violation"
		}
		last := d.Runs[len(d.Runs)-1]
		if class == "violation" && res.inPG(first.Start, last.Start) {
			class, because = "during-pg-restart", "first run while PostgreSQL was restarting; counted as a violation"
		}
		if class == "violation" && res.nearStep(first.Start, last.Start) {
			class, because = "during-clock-step", "runs around a step of the database's clock; counted as a violation"
		}
		dr := dupReport{Task: d.Task, Sched: fmtTime(d.Sched), Class: class, Because: because}
		for _, r := range d.Runs {
			dr.Runs = append(dr.Runs, fmtFire(r, res.procName))
		}
		extra := len(d.Runs) - 1
		res.Duplicates += extra
		switch class {
		case "violation":
			res.Violations += extra
		case "during-pg-restart":
			res.PGDuplicates += extra
			res.Violations += extra
		case "during-clock-step":
			res.ClockDuplicates += extra
			res.Violations += extra
		default:
			res.AllowedReruns += extra
		}
		res.chargeDuplicate(first.Start, last.Start, extra, dupIsViolation(class))
		if !dupIsViolation(class) && len(res.DupDetails) >= 50 {
			continue
		}
		res.DupDetails = append(res.DupDetails, dr)
	}

}

// rerunCause names the fault that makes a second run of first's fire a
// re-run of an interrupted fire: a kill or freeze of its node at most
// interruptWindow after it started, or a database outage that began
// within interruptWindow of its start and before it ended (a node cut off
// past the dead threshold cancels its jobs, and a run so cut short runs
// again: README, Database outages) ("" when none does).
func (res *chaosResult) rerunCause(first fire) (class, because string) {
	for _, f := range res.Faults {
		if slices.Contains(dbOutageKinds, f.Kind) && first.End != 0 {
			// Started before the outage, or in it before its node knew
			// (within the dead threshold), and ended in it.
			if gap := f.At.UnixNano() - first.Start; gap >= -int64(interruptWindow) && gap <= int64(interruptWindow) && first.End >= f.At.UnixNano() {
				return "rerun-after-" + f.Kind,
					fmt.Sprintf("first run on %s still ran when the %s began (cut short by its node's silence)", res.procName(first.Proc), f.Kind)
			}
		}
		if f.idx != first.Proc || !f.downsNode() {
			continue
		}
		if gap := f.At.UnixNano() - first.Start; gap >= 0 && gap <= int64(interruptWindow) {
			return "rerun-after-" + f.Kind,
				fmt.Sprintf("first run on %s started %s before its %s", res.procName(first.Proc), fmtMS(ms(time.Duration(gap))), f.Kind)
		}
	}
	return "", ""
}

// dupIsViolation reports whether a duplicate of class counts as a
// violation.
func dupIsViolation(class string) bool {
	return class == "violation" || class == "during-pg-restart" || class == "during-clock-step"
}

// findLost reports the tasks silent for longer than lostAfter inside
// [from, to]; a silence that meets a PostgreSQL restart counts as delayed,
// one that a step back of the database's clock explains as held.
func (res *chaosResult) findLost(tasks []string, byTask map[string][]fire, from, to time.Time, lostAfter time.Duration) {
	lo, hi := from.UnixNano(), to.UnixNano()
	for _, task := range tasks {
		fs := byTask[task]
		prev := lo
		var prevFire *fire
		check := func(next int64, nextFire *fire) {
			if next-prev > int64(lostAfter) {
				lf := lostFire{Task: task, From: time.Unix(0, prev), To: time.Unix(0, next), GapMS: ms(time.Duration(next - prev))}
				if prevFire != nil {
					lf.Before = fmtFire(*prevFire, res.procName)
				}
				if nextFire != nil {
					lf.After = fmtFire(*nextFire, res.procName)
				}
				lf.PGWindow = res.inPG(prev, next)
				lf.ClockBack = !lf.PGWindow && res.heldByStepBack(prev, next, lostAfter)
				switch {
				case lf.PGWindow:
					res.PGDelayed++
				case lf.ClockBack:
					res.ClockHeld++
				default:
					res.Lost++
				}
				if len(res.LostDetails) < 100 {
					res.LostDetails = append(res.LostDetails, lf)
				}
			}
		}
		for i := range fs {
			s := fs[i].Start
			if s < lo {
				prevFire = &fs[i]
				continue
			}
			if s > hi {
				check(s, &fs[i])
				prev = hi + 1 // checked
				break
			}
			check(s, &fs[i])
			prev, prevFire = s, &fs[i]
		}
		if prev <= hi {
			check(hi, nil)
		}
	}
}

// analyzeResumes measures, per PostgreSQL fault, how long after the
// server answered again each task fired (started) for the first time.
func (res *chaosResult) analyzeResumes(byTask map[string][]fire) {
	for _, f := range res.Faults {
		if !isDBOutage(f.Kind) || f.Until.IsZero() {
			continue
		}
		back := f.Until.UnixNano()
		var ds []time.Duration
		for _, fs := range byTask {
			i := sort.Search(len(fs), func(i int) bool { return fs[i].Start >= back })
			if i < len(fs) {
				ds = append(ds, time.Duration(fs[i].Start-back))
			}
		}
		f.Resume, f.resumeDs = summarize(ds), ds
	}
}

// clockStepsOf returns the clock-step faults that moved the clock, by
// time, with the offset each left.
func clockStepsOf(faults []*fault) []clockStep {
	var out []clockStep
	for _, f := range faults {
		switch {
		case f.step == 0:
		case f.Kind == "clock-step":
			out = append(out, clockStep{at: f.At.UnixNano(), step: f.step, f: f})
		case f.Kind == "clock-failover" && !f.Until.IsZero():
			// The nodes meet the new clock when the server is back.
			out = append(out, clockStep{at: f.Until.UnixNano(), step: f.step, f: f})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	var off time.Duration
	for i := range out {
		off += out[i].step
		out[i].offset = off
	}
	return out
}

// dbOffsetAt is how far the database's clock ran ahead of the local one
// at local time t (unix nanos), as the clock steps set it.
func (res *chaosResult) dbOffsetAt(t int64) time.Duration {
	var off time.Duration
	for _, s := range res.clockSteps {
		if s.at > t {
			break
		}
		off = s.offset
	}
	return off
}

// dbLag is f's start lag on the database's clock: its start (local) moved
// by the database's offset then, minus its fire time (database).
func (res *chaosResult) dbLag(f fire) time.Duration {
	return f.Lag() + res.dbOffsetAt(f.Start)
}

// settlingAfterStep reports whether local time t falls within the time
// the nodes need to settle after a clock step: DeadAfter + a heartbeat,
// which the library gives every live peer to beat under the new clock.
func (res *chaosResult) settlingAfterStep(t int64) bool {
	for _, s := range res.clockSteps {
		if t >= s.at && t <= s.at+int64(res.stepSettle) {
			return true
		}
	}
	return false
}

// nearStep reports whether [a, b] (unix nanos) meets a clock step, from a
// second before it until the nodes settled on the new clock and a step
// back has held the tasks for its length.
func (res *chaosResult) nearStep(a, b int64) bool {
	for _, s := range res.clockSteps {
		lo, hi := s.at-int64(time.Second), s.at+int64(res.stepSettle+s.step.Abs())
		if a <= hi && b >= lo {
			return true
		}
	}
	return false
}

// heldByStepBack reports whether the silence [a, b] (unix nanos) is one a
// step back of the database's clock explains: the clock stepped back
// within it (or at most the settling time after it began, while a node
// still fired on its old estimate), and it lasted no longer than lostAfter
// plus the step, since the fire times the clock must reach again are
// already past.
func (res *chaosResult) heldByStepBack(a, b int64, lostAfter time.Duration) bool {
	for _, s := range res.clockSteps {
		if s.step >= 0 {
			continue
		}
		if b >= s.at && a <= s.at+int64(res.stepSettle) && b-a <= int64(lostAfter-s.step) {
			return true
		}
	}
	return false
}

// analyzeClockSteps measures, per clock step, how long after it each task
// fired (started) for the first time, and the start lag, on the
// database's clock, of the fires while the nodes settled on it.
func (res *chaosResult) analyzeClockSteps(byTask map[string][]fire) {
	for _, s := range res.clockSteps {
		var first, lags []time.Duration
		end := s.at + int64(res.stepSettle)
		for _, fs := range byTask {
			i := sort.Search(len(fs), func(i int) bool { return fs[i].Start >= s.at })
			if i < len(fs) {
				first = append(first, time.Duration(fs[i].Start-s.at))
			}
			for ; i < len(fs) && fs[i].Start <= end; i++ {
				lags = append(lags, res.dbLag(fs[i]))
			}
		}
		s.f.AfterStep = summarize(first)
		s.f.StepLag = summarize(lags)
	}
}
