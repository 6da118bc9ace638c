package harness

import (
	"fmt"
	"sort"
	"time"
)

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
	byTask := map[string][]fire{}
	var lags []time.Duration
	for _, f := range fires {
		byTask[f.Task] = append(byTask[f.Task], f)
		lags = append(lags, f.Lag())
	}
	res.Lag = summarize(lags)
	for _, fs := range byTask {
		sort.Slice(fs, func(i, j int) bool { return fs[i].Start < fs[j].Start })
	}
	tasks := p.taskNames()
	if exp, err := cronTimes(p.Cron, from, to); err == nil {
		res.Missed = analyzeSteady(fires, tasks, exp, from, to).Missed
	}
	res.analyzeFailovers(ids, byTask)
	res.analyzeResumes(byTask)
	res.classifyDuplicates(fires)
	res.findLost(tasks, byTask, from, to, lostAfter)
	res.findLostSteps(p, byTask, from, to.Add(-lostAfter))
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
		for id := range ids[f.idx] {
			f.NodeIDs = append(f.NodeIDs, id)
		}
		sort.Slice(f.NodeIDs, func(i, j int) bool { return f.NodeIDs[i] < f.NodeIDs[j] })
		if !f.downsNode() {
			continue
		}
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
		class, because := "violation", ""
		for _, f := range res.Faults {
			if f.idx != first.Proc || !f.downsNode() {
				continue
			}
			if gap := f.At.UnixNano() - first.Start; gap >= 0 && gap <= int64(interruptWindow) {
				class = "rerun-after-" + f.Kind
				because = fmt.Sprintf("first run on %s started %s before its %s", res.procName(first.Proc), fmtMS(ms(time.Duration(gap))), f.Kind)
				break
			}
		}
		if class == "violation" && res.inPG(first.Start, d.Runs[len(d.Runs)-1].Start) {
			class, because = "during-pg-restart", "first run while PostgreSQL was restarting; counted as a violation"
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
		default:
			res.AllowedReruns += extra
		}
		if class != "violation" && class != "during-pg-restart" && len(res.DupDetails) >= 50 {
			continue
		}
		res.DupDetails = append(res.DupDetails, dr)
	}

}

// findLost reports the tasks silent for longer than lostAfter inside
// [from, to]; a silence that meets a PostgreSQL restart counts as delayed.
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
				if lf.PGWindow {
					res.PGDelayed++
				} else {
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
		if (f.Kind != "pg-restart" && f.Kind != "pg-stop" && f.Kind != "silent-path") || f.Until.IsZero() {
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
		f.Resume = summarize(ds)
	}
}
