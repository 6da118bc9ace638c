package easyjob

import (
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// Option configures one registered task.
type Option func(*taskSpec) error

// Parent makes the task a child of the named task: it runs after each
// successful run of the parent (gated by its own cron when it has one) and
// is never picked by the loader on its own.
func Parent(name string) Option {
	return func(s *taskSpec) error {
		if name == "" {
			return fmt.Errorf("%w: Parent name is empty", ErrInvalidOption)
		}
		s.Parent = name
		return nil
	}
}

// Timeout gives each run a deadline; a run that hits it is recorded as
// timed_out. A job that ignores its context keeps its worker until it returns.
func Timeout(d time.Duration) Option {
	return func(s *taskSpec) error {
		if d <= 0 {
			return fmt.Errorf("%w: Timeout must be positive (got %v)", ErrInvalidOption, d)
		}
		s.Opts.Timeout = d
		return nil
	}
}

// Retry re-runs a failed fire up to n more times, waiting backoff, then
// doubling it (with jitter, capped at 10 minutes) for each further attempt.
// A retry is a pending fire that any node may claim. Children run only after
// the parent finally succeeds.
func Retry(n int, backoff time.Duration) Option {
	return func(s *taskSpec) error {
		if n < 0 || backoff < 0 {
			return fmt.Errorf("%w: Retry(%d, %v) needs n >= 0 and backoff >= 0", ErrInvalidOption, n, backoff)
		}
		if backoff == 0 {
			backoff = time.Second
		}
		s.Opts.MaxRetries, s.Opts.RetryBackoff = n, backoff
		return nil
	}
}

// TZ evaluates the cron expression in the named IANA time zone (default
// UTC). "CRON_TZ=Zone " at the start of the expression does the same.
func TZ(name string) Option {
	return func(s *taskSpec) error {
		if _, err := time.LoadLocation(name); err != nil {
			return fmt.Errorf("%w: time zone %q: %w", ErrInvalidOption, name, err)
		}
		s.Opts.Timezone = name
		return nil
	}
}

// MisfirePolicy says what a fire found late does: FireOnceNow, Skip or
// CatchUp make one. The zero value is no policy (Misfire refuses it).
type MisfirePolicy struct {
	action  repository.MisfireAction
	catchUp int
}

// String names the policy as history and the CLI show it.
func (p MisfirePolicy) String() string {
	if p.action == repository.MisfireCatchUp {
		return fmt.Sprintf("%s(%d)", p.action, p.catchUp)
	}
	return string(p.action)
}

// FireOnceNow (the default) makes a late fire run once now; the next fire
// comes from the cron after now.
func FireOnceNow() MisfirePolicy { return MisfirePolicy{action: repository.MisfireFireOnceNow} }

// Skip makes a late fire not run; the next fire is the cron's next after now.
func Skip() MisfirePolicy { return MisfirePolicy{action: repository.MisfireSkip} }

// CatchUp makes the newest n missed fires run one after another (older missed
// fires are recorded as skipped); then the cron resumes.
func CatchUp(n int) MisfirePolicy {
	return MisfirePolicy{action: repository.MisfireCatchUp, catchUp: n}
}

// Misfire sets the misfire policy and the lateness that triggers it
// (threshold 0 means the default, 5s).
func Misfire(p MisfirePolicy, threshold time.Duration) Option {
	return func(s *taskSpec) error {
		if p.action == "" || threshold < 0 {
			return fmt.Errorf("%w: Misfire needs a policy (FireOnceNow, Skip or CatchUp) and threshold >= 0", ErrInvalidOption)
		}
		if p.action == repository.MisfireCatchUp && p.catchUp < 1 {
			return fmt.Errorf("%w: CatchUp(n) needs n >= 1 (got %d)", ErrInvalidOption, p.catchUp)
		}
		s.Opts.Misfire, s.Opts.CatchUpMax = p.action, p.catchUp
		s.Opts.MisfireThreshold = threshold
		return nil
	}
}

// SkipInterrupted makes a fire interrupted by the death of its node is not
// re-run by the peer that recovers it (the default re-runs it: at least once).
func SkipInterrupted() Option {
	return func(s *taskSpec) error {
		s.Opts.Recover = repository.RecoverSkip
		return nil
	}
}

// InTx runs the job in a database transaction that also records its
// finish (PostgreSQL stores only): the job writes through Tx(ctx), and its
// writes commit with the run's fenced finish or not at all. A run whose
// node dies, is cut off or loses its claim rolls back, and the fire runs
// again elsewhere: for effects in the same database the fire takes effect
// exactly once. Each running InTx job holds one pooled connection until
// its finish commits. Chain tasks (a parent or children) cannot use it.
func InTx() Option {
	return func(s *taskSpec) error {
		s.InTx = true
		return nil
	}
}

// Window bounds the task's fires: none before start, none after end, when
// the task finishes after its last run (a zero time leaves that side
// open). Times are kept to the second, in UTC; the cron still decides the
// fires within the window. A window of a schedule created at runtime can
// be changed with Update; one of a registered task with its code.
func Window(start, end time.Time) Option {
	return func(s *taskSpec) error {
		start, end = start.UTC().Truncate(time.Second), end.UTC().Truncate(time.Second)
		if !start.IsZero() && !end.IsZero() && !end.After(start) {
			return fmt.Errorf("%w: Window end %s must be after its start %s", ErrInvalidOption,
				end.Format(time.RFC3339), start.Format(time.RFC3339))
		}
		s.Opts.Start, s.Opts.End = start, end
		return nil
	}
}

// Calendar makes the task skip the fires that fall in the group's
// exclusion calendar name (Client.SetCalendar: dates, ranges of dates,
// excluding crons such as weekends): each such fire is recorded skipped,
// with the calendar's name, and the next one follows as usual. A calendar
// the group does not have excludes nothing.
func Calendar(name string) Option {
	return func(s *taskSpec) error {
		if name == "" || len(name) > 200 {
			return fmt.Errorf("%w: Calendar name must be 1 to 200 bytes (got %d)", ErrInvalidOption, len(name))
		}
		s.Opts.Calendar = name
		return nil
	}
}

// Jitter delays each cron fire of the task by up to upTo: a delay hashed
// from the task's name and the fire time, so every node computes the same
// one (a takeover does not move it) while 10,000 tasks on "0 * * * *"
// spread over upTo instead of hitting the database and the services they
// call in one millisecond. History keeps the fire's own time; the start
// lag counts from the delayed one. Manual fires and retries are not
// delayed. Keep upTo well below the cron's interval.
func Jitter(upTo time.Duration) Option {
	return func(s *taskSpec) error {
		if upTo <= 0 || upTo > 24*time.Hour {
			return fmt.Errorf("%w: Jitter must be above 0 and at most 24h (got %v)", ErrInvalidOption, upTo)
		}
		s.Opts.Jitter = upTo
		return nil
	}
}

// Spread moves every fire of the task later by a fixed offset in
// [0, window): a hash of the task's name, so every node computes the same
// offset and the task keeps its own grid (cron time + offset, every
// time). Unlike Jitter the offset is part of the schedule: the stored
// next fire and the run's scheduled time are the moved ones, so 100,000
// tasks on "0 * * * *" come due over window instead of in one second, in
// the database as in the services they call. Window bounds apply to the
// moved times; a one-off ("@at") is not moved. Keep window well below the
// cron's interval.
func Spread(window time.Duration) Option {
	return func(s *taskSpec) error {
		if window <= 0 || window > 24*time.Hour {
			return fmt.Errorf("%w: Spread must be above 0 and at most 24h (got %v)", ErrInvalidOption, window)
		}
		s.Opts.Spread = window
		return nil
	}
}

// SpreadOffset is the offset Spread(window) gives the task named task:
// its fires are its cron's times + this, on every node. Tools that check
// when a spread task ran (a bench harness, a monitor) compute it here.
func SpreadOffset(task string, window time.Duration) time.Duration {
	return schedule.SpreadOf(task, window)
}

// PauseAfterFailures pauses the task when n of its runs in a row failed
// or timed out, on whichever nodes they ran (TaskInfo.Failures counts
// them; a success resets the count). The pause is in the audit log, by
// the node that saw the n-th failure (via "node"), and shows in the UI;
// Resume lets the task fire again.
func PauseAfterFailures(n int) Option {
	return func(s *taskSpec) error {
		if n < 1 {
			return fmt.Errorf("%w: PauseAfterFailures needs n >= 1 (got %d)", ErrInvalidOption, n)
		}
		s.Opts.PauseAfter = n
		return nil
	}
}

// OverlapPolicy says what a fire due while the task's previous run still
// runs does (Overlap); see the constants.
type OverlapPolicy = repository.OverlapPolicy

// The overlap policies.
const (
	// OverlapWait (the default): the fire waits for the run, is then
	// late, and the misfire policy decides (by default: run once now).
	OverlapWait = repository.OverlapWait
	// OverlapSkip drops the fires due while the run ran.
	OverlapSkip = repository.OverlapSkip
	// OverlapBufferOne runs the first of them once the run ends.
	OverlapBufferOne = repository.OverlapBufferOne
	// OverlapBufferAll runs each of them in turn (at most the newest 1000).
	OverlapBufferAll = repository.OverlapBufferAll
	// OverlapCancel cancels the running job's context at the next fire,
	// waits for it to return, then runs that fire.
	OverlapCancel = repository.OverlapCancel
	// OverlapTerminate cancels it and waits at most OverlapGrace (default
	// 10s), then runs the fire; a job that ignores its context is left to
	// return on its own, its run recorded cancelled (terminated).
	OverlapTerminate = repository.OverlapTerminate
	// OverlapAllowAll starts every fire at its time while earlier runs
	// still run, at most OverlapLimit at once (default 10); a fire due at
	// the limit is skipped and recorded so.
	OverlapAllowAll = repository.OverlapAllowAll
)

// Overlap sets what happens when a fire of the task comes due while its
// previous run (on whichever node) still runs. Under every policy but
// OverlapAllowAll, runs of one task never overlap: the node that runs a
// fire holds the task until its finish is written, and applies the
// policy then (or, to cancel or terminate, at the next fire's time).
// Fires run after an overlap are recorded with kind "buffered"; cancelled
// runs with status "cancelled".
//
// Under OverlapAllowAll the node that holds the task moves its row on to
// the next fire as soon as a run starts, and records each run when its
// job returns (retries do not apply: each fire runs once); at most
// OverlapLimit of its runs go on at once on that node. A task with
// children, or InTx, cannot allow all.
func Overlap(p OverlapPolicy) Option {
	return func(s *taskSpec) error {
		if !p.Valid() {
			return fmt.Errorf("%w: Overlap(%q): not a policy (wait, skip, buffer_one, buffer_all, cancel, terminate, allow_all)", ErrInvalidOption, string(p))
		}
		s.Opts.Overlap = p
		return nil
	}
}

// OverlapLimit bounds the runs of an OverlapAllowAll task at once (1 to
// 1000; default 10).
func OverlapLimit(n int) Option {
	return func(s *taskSpec) error {
		if n < 1 || n > repository.MaxOverlapLimit {
			return fmt.Errorf("%w: OverlapLimit must be 1 to %d (got %d)", ErrInvalidOption, repository.MaxOverlapLimit, n)
		}
		s.Opts.OverlapLimit = n
		return nil
	}
}

// OverlapGrace is how long OverlapTerminate waits for a cancelled job to
// return before it runs the next fire without it (default 10s).
func OverlapGrace(d time.Duration) Option {
	return func(s *taskSpec) error {
		if d <= 0 || d > time.Hour {
			return fmt.Errorf("%w: OverlapGrace must be above 0 and at most 1h (got %v)", ErrInvalidOption, d)
		}
		s.Opts.OverlapGrace = d
		return nil
	}
}

// MaxFires finishes the task once n of its fires ran (cron, manual,
// buffered and misfire fires; a retry is part of its fire; chain steps
// and backfills are not counted), on whichever nodes: run n times, then
// stop. TaskInfo.Fires counts them.
func MaxFires(n int64) Option {
	return func(s *taskSpec) error {
		if n < 1 {
			return fmt.Errorf("%w: MaxFires needs n >= 1 (got %d)", ErrInvalidOption, n)
		}
		s.Opts.MaxFires = n
		return nil
	}
}

// Broadcast runs each fire of the task once on every live node that
// registers it, instead of once in the group: clear a local cache, reload
// a node's configuration. No node claims the task; each fires it at its
// cron's times on the database's clock and records its own run, so the
// history holds one row per node per fire, and no node runs a fire twice.
// A node runs only the fires after it started, and none while it stops
// or cannot reach the database: a fire it missed is not run late (nor is
// one found later than the misfire threshold). A run whose node dies is
// recorded abandoned by a peer and not run again. Pause, Resume,
// Reschedule and Remove apply to every node.
//
// Each fire runs once per node, so a broadcast task cannot be a chain
// step or have children, and Retry, InTx, Overlap (other than the
// default), MaxFires, Calendar and Misfire(CatchUp) are refused with it;
// Client.Trigger and Backfill refuse it (ErrNotTriggerable): it runs at
// its cron's fires. Timeout, TZ, Window, Jitter, Spread and
// PauseAfterFailures apply.
func Broadcast() Option {
	return func(s *taskSpec) error {
		s.Opts.Broadcast = true
		return nil
	}
}

// OptionsOf returns the Options that make the stored policies o (the
// defaults left out): what a tool passes to Update to keep a schedule's
// policies while it changes one of them.
func OptionsOf(o repository.TaskOptions) []Option {
	var opts []Option
	if o.Timezone != "" {
		opts = append(opts, TZ(o.Timezone))
	}
	if o.Timeout > 0 {
		opts = append(opts, Timeout(o.Timeout))
	}
	if o.MaxRetries > 0 || o.RetryBackoff > 0 {
		opts = append(opts, Retry(o.MaxRetries, o.RetryBackoff))
	}
	if o.Misfire != "" || o.MisfireThreshold > 0 {
		p := FireOnceNow()
		switch o.Misfire {
		case repository.MisfireSkip:
			p = Skip()
		case repository.MisfireCatchUp:
			p = CatchUp(o.CatchUpMax)
		}
		opts = append(opts, Misfire(p, o.MisfireThreshold))
	}
	if o.Recover == repository.RecoverSkip {
		opts = append(opts, SkipInterrupted())
	}
	if o.EveryFromCreation {
		opts = append(opts, EveryFromCreation())
	}
	if !o.Start.IsZero() || !o.End.IsZero() {
		opts = append(opts, Window(o.Start, o.End))
	}
	if o.Calendar != "" {
		opts = append(opts, Calendar(o.Calendar))
	}
	if o.Jitter > 0 {
		opts = append(opts, Jitter(o.Jitter))
	}
	if o.Spread > 0 {
		opts = append(opts, Spread(o.Spread))
	}
	if o.PauseAfter > 0 {
		opts = append(opts, PauseAfterFailures(o.PauseAfter))
	}
	if o.Overlap != OverlapWait {
		opts = append(opts, Overlap(o.Overlap))
	}
	if o.OverlapLimit > 0 {
		opts = append(opts, OverlapLimit(o.OverlapLimit))
	}
	if o.OverlapGrace > 0 {
		opts = append(opts, OverlapGrace(o.OverlapGrace))
	}
	if o.MaxFires > 0 {
		opts = append(opts, MaxFires(o.MaxFires))
	}
	if o.Broadcast {
		opts = append(opts, Broadcast())
	}
	return opts
}

// EveryFromCreation anchors an "@every <interval>" schedule at the
// task's creation (to the second) instead of the Unix epoch: a task
// created at 10:00:07 with "@every 1h" fires at 11:00:07, 12:00:07, ...
// rather than on the hour. Every node reads the same anchor from the
// task's row, so a restart or a failover keeps the grid. It has no
// effect on a cron expression.
func EveryFromCreation() Option {
	return func(s *taskSpec) error {
		s.Opts.EveryFromCreation = true
		return nil
	}
}

// Daemon keeps the task's function running on exactly one live node of
// the group at a time: a queue consumer, a stream follower, a guard.
// Register it with an empty cron:
//
//	easyjob.Register("consumer", "", consume, easyjob.Daemon())
//
// When the function returns or panics it is started again, after
// repository.DaemonRestart (1s) when it returned nil or was cancelled,
// after a backoff doubling with each failure in a row (up to 1 min) when
// it failed. When its node dies, or is cut off from the database past
// DeadAfter, its context is cancelled there and a peer starts it within
// the failover time; a node that shuts down cancels it at once, so a
// peer takes over within about a second. Pausing a daemon cancels its
// run; Client.Cancel cancels one run (it is started again). Each run is
// a row of the history. A daemon holds one of its node's Workers while
// it runs. It combines with Timeout (each run bounded), TZ and
// PauseAfterFailures, not with a chain, InTx, Retry, an overlap policy,
// MaxFires, Window, Spread, Jitter, EveryFromCreation, a calendar or
// Broadcast.
func Daemon() Option {
	return func(s *taskSpec) error {
		s.Opts.Daemon = true
		return nil
	}
}

// Parents makes the task a step of a DAG: it runs for a fire of its
// parents once every one of them has succeeded for that fire, whichever
// node each ran on. The parents run in parallel, each claimed like any
// task; there is no coordinator: the last parent to finish makes the step
// due, and any node claims it. A step has no cron of its own (register it
// with ""). A parent that fails skips the step (and what follows it) for
// that fire, unless the parent retries (Retry): the step then waits for
// the retry; EvenIfParentsFail runs it anyway. A step reads its parents'
// results with ParentResults. Parents are registered with the step, in
// the same process; a cycle is refused (ErrCycle). Unlike Parent, whose
// children run one after another on the worker that ran their parent, a
// step is a task of its own: its node may die and a peer runs it, without
// running the steps that finished again.
func Parents(names ...string) Option {
	return func(s *taskSpec) error {
		if len(names) == 0 {
			return fmt.Errorf("%w: Parents needs at least one name", ErrInvalidOption)
		}
		seen := map[string]bool{}
		for _, p := range names {
			if err := checkName("parent", p); err != nil {
				return err
			}
			if seen[p] {
				return fmt.Errorf("%w: Parents names %q twice", ErrInvalidOption, p)
			}
			seen[p] = true
		}
		s.Opts.Parents = repository.NamesOf(names...)
		return nil
	}
}

// EvenIfParentsFail runs a DAG step (Parents) once every parent's run of
// a fire ended, succeeded or not (its last attempt, when it retries),
// instead of skipping it when one failed.
func EvenIfParentsFail() Option {
	return func(s *taskSpec) error {
		s.Opts.OnParentFailure = repository.ParentFailureRun
		return nil
	}
}

// MaxShards bounds Shards.
const MaxShards = 1024

// Shards splits each fire of the task into n shard runs, each claimed on
// its own, so that the live nodes share them (as the strategy spreads
// tasks) and a dead node's shards are run by peers like any task. Each
// run sees its shard in Info.Shard (0..n-1) and Info.Shards (n); a shard
// may hand a result (SetResult) to the DAG steps after the task, which
// run once every shard succeeded (a reduce: ParentResults holds one
// entry per shard, "name[i]"). Shards are rows named "name[0]" ..
// "name[n-1]" beside the task's own, which fires on the cron and splits;
// history lists the shards' runs under the task's name.
func Shards(n int) Option {
	return func(s *taskSpec) error {
		if n < 2 || n > MaxShards {
			return fmt.Errorf("%w: Shards must be 2..%d (got %d)", ErrInvalidOption, MaxShards, n)
		}
		s.Opts.Shards = n
		return nil
	}
}
