package repository

// RunKind says why a run ran. It is recorded on every execution and
// labels the fire metrics.
type RunKind string

// Run kinds.
const (
	RunCron    RunKind = "cron"    // the cron came due
	RunManual  RunKind = "manual"  // an operator's trigger
	RunRetry   RunKind = "retry"   // a retry of a failed run
	RunMisfire RunKind = "misfire" // a late fire, run by its misfire policy
	RunChain   RunKind = "chain"   // a chain step, after its parent's success
	// RunBuffered is a cron fire that came due while the task's previous
	// run ran, run once that ended (overlap policies buffer_one,
	// buffer_all, cancel and terminate); the misfire policy does not
	// apply to it.
	RunBuffered RunKind = "buffered"
	// RunBackfill is a fire of a past range an operator asked for
	// (Client.Backfill), run with its own nominal time.
	RunBackfill RunKind = "backfill"
)

// String implements fmt.Stringer.
func (k RunKind) String() string { return string(k) }

// KindOf is the kind of the run of t's pending fire: a chain step's
// run is a chain run whatever made it due; an operator's trigger is
// manual (its retries are retries); a late fire run by its misfire
// policy is a misfire; a backfill fire is one, retries included; a fire
// buffered behind an overlapping run is buffered.
func KindOf(t Task, misfire MisfireAction) RunKind {
	switch {
	case t.ParentID != 0:
		return RunChain
	case t.FireKind == RunChain && t.Attempt <= 1:
		return RunChain // a DAG step made due by its parents
	case t.FireKind == RunManual && t.Attempt <= 1:
		return RunManual
	case t.FireKind == RunBackfill:
		return RunBackfill
	case t.FireKind == RunBuffered && t.Attempt <= 1:
		return RunBuffered
	case misfire != "":
		return RunMisfire
	case t.Attempt > 1:
		return RunRetry
	}
	return RunCron
}
