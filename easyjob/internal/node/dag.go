package node

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/repository"
)

// A DAG step (TaskOptions.Parents) has a row of its own that waits,
// unclaimed, at repository.AwaitingParents. There is no coordinator: the
// node that settles a parent's finish asks the store to advance each step
// after it (DagStore.AdvanceStep), which makes the step due for a fire
// once every parent completed it, under the step's row lock, so the last
// parent to finish is the one that makes it due. The step is then an
// ordinary due fire of kind chain: any node's loader claims it with the
// same version-checked claim as a cron fire, so parents and steps run on
// different nodes in parallel, and a dead node's step is recovered like
// any task. A step's own finish asks again (a fire its parents completed
// while it ran). A node that dies between a parent's finish and the ask
// loses nothing: every node sweeps its steps each DagSweep.

// dagSweep is how often a node asks for every DAG step it registers,
// besides the asks that follow finishes.
const dagSweep = 2 * time.Second

// dagSteps is the node's DAG service: the steps to ask for, and a wake-up.
type dagSteps struct {
	mu      sync.Mutex
	pending map[string]bool
	wake    chan struct{}
	swept   time.Time // owned by the loop
}

// stepsAfter queues the DAG steps after task s (and s itself, when it is
// a step: a fire its parents completed while it ran) to be asked for.
func (n *Node) stepsAfter(s *spec.Spec) {
	if len(s.Steps) == 0 && !s.IsStep() {
		return
	}
	d := &n.dag
	d.mu.Lock()
	if d.pending == nil {
		d.pending = map[string]bool{}
	}
	for _, name := range s.Steps {
		d.pending[name] = true
	}
	if s.IsStep() {
		d.pending[s.Name] = true
	}
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// hasSteps reports whether the node registers a DAG step.
func (n *Node) hasSteps() bool {
	for _, s := range n.specs {
		if s.IsStep() {
			return true
		}
	}
	return false
}

// advanceSteps is one pass of the DAG loop: the queued steps, and every
// step of the node once per dagSweep.
func (n *Node) advanceSteps(ctx context.Context) error {
	d := &n.dag
	d.mu.Lock()
	names := make([]string, 0, len(d.pending))
	for name := range d.pending {
		names = append(names, name)
	}
	clear(d.pending)
	d.mu.Unlock()
	if time.Since(d.swept) >= dagSweep {
		d.swept = time.Now()
		for name, s := range n.specs {
			if s.IsStep() && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	var failed error
	for _, name := range names {
		s := n.specs[name]
		if s == nil || !s.IsStep() {
			continue
		}
		fire, err := n.store.AdvanceStep(ctx, n.stepAdvance(s))
		switch {
		case errors.Is(err, repository.ErrTaskNotFound):
		case err != nil:
			failed = err
			n.stepsLater(name) // asked again next pass
		case !fire.IsZero():
			n.log.Debug().Str("task", name).Time("fire", fire).Msg("easyjob: DAG step due: its parents completed the fire")
			n.poke()
		}
	}
	return failed
}

// stepsLater queues name again without a wake-up.
func (n *Node) stepsLater(name string) {
	n.dag.mu.Lock()
	n.dag.pending[name] = true
	n.dag.mu.Unlock()
}

// stepAdvance is the store's question for step s.
func (n *Node) stepAdvance(s *spec.Spec) repository.StepAdvance {
	a := repository.StepAdvance{Group: n.cfg.Group, Step: s.Name, Policy: s.Opts.OnParentFailure}
	for _, p := range s.Opts.Parents.List() {
		attempts := 1
		if ps := n.specs[p]; ps != nil {
			attempts += ps.Opts.MaxRetries
		}
		a.Parents = append(a.Parents, repository.StepParent{Name: p, Attempts: attempts})
	}
	return a
}

// parentResults is a DAG step run's reader of its parents' results.
func (n *Node) parentResults(task repository.TaskID) func(context.Context) (map[string]string, error) {
	return func(ctx context.Context) (map[string]string, error) {
		return n.store.ParentResults(ctx, task)
	}
}

// resultText is what a run's finish stores as its result
// (Finish.Result): what its job gave SetResult, when it succeeded.
func resultText(result *[]byte, status repository.ExecStatus) string {
	if result == nil || status != repository.ExecSucceeded {
		return ""
	}
	return string(*result)
}
