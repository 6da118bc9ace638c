// Package observe is what the easyjob runtime reports to metrics and
// traces: an Observer receives an Event for each thing a node does, and a
// RunObserver also wraps each run. The packages easyjob/metrics/prom and
// easyjob/metrics/otel implement it; Config.Observer takes one.
package observe

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Observer receives what the runtime does, for metrics and traces (the
// packages easyjob/metrics/prom and easyjob/metrics/otel implement it).
// Observe is called synchronously on the runtime's goroutines: it must be
// quick and must not block (count, record, hand off). An Event is a plain
// value: observing costs no allocation, and nothing at all when
// Config.Observer is nil.
type Observer interface {
	Observe(Event)
}

// RunObserver is an Observer that also wraps each run, as a tracer does:
// StartRun is called as a job starts and returns the job's context (ctx
// or one derived from it: a chain's children start from their parent's)
// and a function the runtime calls with the run's outcome, after the
// run's children.
type RunObserver interface {
	Observer
	StartRun(ctx context.Context, r RunInfo) (context.Context, func(RunResult))
}

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds, with the Event fields each sets.
const (
	// EventFire: a fire started. Task, Cron, Scheduled, Lag (start minus
	// scheduled time, database clock), Trigger, Attempt, Misfire.
	EventFire EventKind = iota + 1
	// EventRunEnd: a run ended. Task, Scheduled, Attempt, Status,
	// Duration, Err, At (when it ended).
	EventRunEnd
	// EventClaim: a claim statement. Count (won), Lost (taken by a peer
	// first), Stolen (won past the steal threshold).
	EventClaim
	// EventRecovery: tasks of a dead node recovered by this node. Count,
	// Lag (how long the oldest had been due or claimed, database clock).
	EventRecovery
	// EventMisfire: a fire found late past its threshold. Task, Misfire
	// (the action applied), Lag.
	EventMisfire
	// EventHandover: a finish gave a claim to a peer (the strategy names
	// another node). Task.
	EventHandover
	// EventHeartbeatFailed: a heartbeat could not be written. Err.
	EventHeartbeatFailed
	// EventGauges: after each heartbeat. Held (claims held), Busy (jobs
	// running), Live (live nodes in the node's view).
	EventGauges
	// EventStoreOp: one store call. Op (the method), Duration, Err.
	EventStoreOp
	// EventTaskRemoved: the node removed a task (stale past
	// StaleTaskExpiry): its series can go. Task.
	EventTaskRemoved
)

// Trigger says why a fire ran: the kind its run is recorded with.
type Trigger = repository.RunKind

// Triggers.
const (
	TriggerCron    = repository.RunCron    // the cron came due
	TriggerManual  = repository.RunManual  // an operator's trigger
	TriggerRetry   = repository.RunRetry   // a retry of a failed run
	TriggerMisfire = repository.RunMisfire // a late fire, run by its misfire policy
	TriggerChain   = repository.RunChain   // a child after its parent's success
)

// Event is one thing the runtime did; Kind says which fields are set.
type Event struct {
	Kind      EventKind
	Group     string
	Node      int64
	Task      string
	Cron      string
	Scheduled time.Time
	Trigger   Trigger
	Attempt   int
	Status    repository.ExecStatus
	Misfire   repository.MisfireAction
	Lag       time.Duration
	Duration  time.Duration
	At        time.Time
	Count     int
	Lost      int
	Stolen    int
	Held      int
	Busy      int
	Live      int
	Op        string
	Err       error
}

// RunInfo describes a run to a RunObserver.
type RunInfo struct {
	Group     string
	Node      int64
	Task      string
	Cron      string
	Scheduled time.Time
	Attempt   int
	Trigger   Trigger
	Misfire   repository.MisfireAction
}

// RunResult is the outcome of a run.
type RunResult struct {
	Status repository.ExecStatus
	Err    error
}

// Observers fans events out to several observers (nil ones are skipped);
// StartRun calls every RunObserver among them, in order.
func Observers(obs ...Observer) Observer {
	var out multiObserver
	for _, o := range obs {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

type multiObserver []Observer

func (m multiObserver) Observe(e Event) {
	for _, o := range m {
		o.Observe(e)
	}
}

func (m multiObserver) StartRun(ctx context.Context, r RunInfo) (context.Context, func(RunResult)) {
	var ends []func(RunResult)
	for _, o := range m {
		if ro, ok := o.(RunObserver); ok {
			var end func(RunResult)
			ctx, end = ro.StartRun(ctx, r)
			ends = append(ends, end)
		}
	}
	return ctx, func(res RunResult) {
		for i := len(ends) - 1; i >= 0; i-- {
			ends[i](res)
		}
	}
}
