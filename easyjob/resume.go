package easyjob

import (
	"context"

	"github.com/easyjob-go/easyjob/repository"
)

// priorRun is what an earlier run of the same fire of a chain did before
// its node died: the runs recorded under each run, by task name. A peer
// that re-runs the fire resumes the chain from it instead of re-running
// the steps that completed.
type priorRun struct {
	root  repository.Execution
	under map[int64]map[string]repository.Execution // parent run id -> child task -> its run
}

// priorChain returns the abandoned earlier run of c's fire, when c is a
// chain whose last run was abandoned (recovery marks it), or nil.
func (n *node) priorChain(ctx context.Context, c *claim) *priorRun {
	if len(c.spec.children) == 0 || c.task.LastStatus != repository.ExecAbandoned {
		return nil
	}
	runs, err := n.store.ChainRun(ctx, c.task.ID, c.task.NextStartTime)
	if err != nil {
		n.log.Warn().Err(err).Str("task", c.spec.name).Msg("easyjob: could not read the interrupted chain; running it whole")
		return nil
	}
	if len(runs) == 0 {
		return nil
	}
	p := &priorRun{root: runs[0], under: map[int64]map[string]repository.Execution{}}
	for _, r := range runs[1:] {
		if p.under[r.ParentExecutionID] == nil {
			p.under[r.ParentExecutionID] = map[string]repository.Execution{}
		}
		p.under[r.ParentExecutionID][r.TaskName] = r
	}
	return p
}

// rootDone reports whether the root's job had succeeded (see succeeded).
func (p *priorRun) rootDone() bool { return p != nil && len(p.under[p.root.ID]) > 0 }

// step is the earlier run of one chain step under parent run parent.
type step struct {
	p      *priorRun
	parent int64
}

// steps returns the earlier runs under the root, or a zero step.
func (p *priorRun) steps() step {
	if !p.rootDone() {
		return step{}
	}
	return step{p: p, parent: p.root.ID}
}

// child returns the earlier run of the child named name, if any.
func (s step) child(name string) (repository.Execution, bool) {
	if s.p == nil {
		return repository.Execution{}, false
	}
	r, ok := s.p.under[s.parent][name]
	return r, ok
}

// succeeded reports whether run r's job succeeded: recorded so, or a
// child run is recorded under it (children run only after a success; a
// step stays open until its children are done, so its node may have died
// with it still running).
func (s step) succeeded(r repository.Execution) bool {
	return r.Status == repository.ExecSucceeded || s.p != nil && len(s.p.under[r.ID]) > 0
}

// completed reports whether run r's job ended (in success or not) before
// its node died; an interrupted one runs again.
func (s step) completed(r repository.Execution) bool {
	return s.succeeded(r) || r.Status != repository.ExecAbandoned && r.Status != repository.ExecRunning
}

// below returns the earlier runs under run r.
func (s step) below(r repository.Execution) step {
	if s.p == nil {
		return step{}
	}
	return step{p: s.p, parent: r.ID}
}
