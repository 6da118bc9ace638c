package harness

import (
	"fmt"
	"time"
)

// lostStep is a fire of a chain's root after which one of its steps
// never ran.
type lostStep struct {
	Step  string    `json:"step"`
	Sched time.Time `json:"scheduled"`
	Root  string    `json:"root_run"`
}

// findLostSteps checks, for every fire of a chain's root that started in
// [from, to], that each of its steps ran for that fire: a root's job
// always succeeds here, so a step missing is a step lost (a chain cut
// short by a kill, a freeze or the database, and never resumed). The
// duplicates check covers steps run twice.
func (res *chaosResult) findLostSteps(p nodeParams, byTask map[string][]fire, from, to time.Time) {
	if p.ChainDepth == 0 {
		return
	}
	lo, hi := from.UnixNano(), to.UnixNano()
	ran := map[string]map[int64]bool{}
	for _, name := range p.stepNames() {
		ran[name] = map[int64]bool{}
		for _, f := range byTask[name] {
			ran[name][f.Sched] = true
		}
	}
	for i := range p.Tasks {
		for _, root := range byTask[taskName(i)] {
			if root.Start < lo || root.Start > hi {
				continue
			}
			res.ChainFires++
			for k := 1; k <= p.ChainDepth; k++ {
				step := stepName(i, k)
				if ran[step][root.Sched] {
					continue
				}
				res.LostSteps++
				if len(res.LostStepDetails) < 50 {
					res.LostStepDetails = append(res.LostStepDetails, lostStep{
						Step: step, Sched: time.Unix(0, root.Sched).UTC(), Root: fmtFire(root, res.procName),
					})
				}
				break // the steps after it depend on it
			}
		}
	}
}

// lostStepsLine is the report's line about chain steps.
func (res *chaosResult) lostStepsLine() string {
	return fmt.Sprintf("%d  (of %d chain fires checked)", res.LostSteps, res.ChainFires)
}
