package node

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// observe sends e to the configured observer, if any.
func (n *Node) observe(e observe.Event) {
	if n.obs == nil {
		return
	}
	e.Group, e.Node = n.cfg.Group, int64(n.id())
	n.obs.Observe(e)
}

// fired reports a fire about to run to the observer (found at database
// time found) and opens its run; the returned context is the job's and its
// children's parent.
func (n *Node) fired(ctx context.Context, spec *spec.Spec, t *repository.Task, scheduled, found time.Time, misfire repository.MisfireAction) (context.Context, func(observe.RunResult)) {
	if n.obs == nil {
		return ctx, endNothing
	}
	trigger := observe.TriggerCron
	switch {
	case spec.Parent != "":
		trigger = observe.TriggerChain
	case misfire != "":
		trigger = observe.TriggerMisfire
	case t.Attempt > 1:
		trigger = observe.TriggerRetry
	}
	attempt := max(t.Attempt, 1)
	n.observe(observe.Event{Kind: observe.EventFire, Task: spec.Name, Cron: t.Cron, Scheduled: scheduled, Trigger: trigger,
		Attempt: attempt, Misfire: misfire, Lag: max(found.Sub(scheduled), 0)})
	return n.startRun(ctx, observe.RunInfo{Task: spec.Name, Cron: t.Cron, Scheduled: scheduled, Attempt: attempt, Trigger: trigger, Misfire: misfire})
}

// startRun opens a run for a observe.RunObserver; without one it returns ctx and
// a no-op end.
func (n *Node) startRun(ctx context.Context, r observe.RunInfo) (context.Context, func(observe.RunResult)) {
	ro, ok := n.obs.(observe.RunObserver)
	if !ok {
		return ctx, endNothing
	}
	r.Group, r.Node = n.cfg.Group, int64(n.id())
	return ro.StartRun(ctx, r)
}

func endNothing(observe.RunResult) {}
