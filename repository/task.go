package repository

import (
	"fmt"
	"time"
)

// TaskID identifies a task row.
type TaskID int64

// MisfireAction is what is done with a fire found late by more than the
// misfire threshold: stored as a task's option and recorded on the
// execution it applied to. (easyjob.MisfirePolicy is the option a user
// passes to choose one.)
type MisfireAction string

// Misfire actions.
const (
	// MisfireFireOnceNow runs once now; the next fire comes from the cron.
	MisfireFireOnceNow MisfireAction = "fire_once_now"
	// MisfireSkip does not run; the next fire is the cron's next after now.
	MisfireSkip MisfireAction = "skip"
	// MisfireCatchUp runs the missed fires one after another, at most
	// TaskOptions.CatchUpMax of them.
	MisfireCatchUp MisfireAction = "catch_up"
)

// RecoverPolicy says what a peer does with a fire interrupted by the death
// of its node.
type RecoverPolicy string

// Recovery policies.
const (
	// RecoverRerun re-runs the interrupted fire (at least once).
	RecoverRerun RecoverPolicy = "rerun"
	// RecoverSkip drops the interrupted fire and waits for the next one.
	RecoverSkip RecoverPolicy = "skip"
)

// OverlapPolicy says what happens when a task's fire comes due while its
// previous run still runs (on whichever node).
type OverlapPolicy string

// Overlap policies.
const (
	// OverlapWait (the default) lets the fire wait for the run; it is
	// then late, and the misfire policy decides (by default it runs once).
	OverlapWait OverlapPolicy = ""
	// OverlapSkip drops the fires that came due while the run ran; the
	// next is the cron's first after the run ended.
	OverlapSkip OverlapPolicy = "skip"
	// OverlapBufferOne runs the first fire that came due while the run
	// ran once it ended (kind buffered); the others are dropped.
	OverlapBufferOne OverlapPolicy = "buffer_one"
	// OverlapBufferAll runs every fire that came due while the run ran,
	// one after another (kind buffered), at most BufferLimit of them: the
	// newest.
	OverlapBufferAll OverlapPolicy = "buffer_all"
	// OverlapCancel cancels the running job's context when the next fire
	// comes due, waits for the job to return (recorded cancelled), then
	// runs that fire.
	OverlapCancel OverlapPolicy = "cancel"
	// OverlapTerminate cancels the running job's context when the next
	// fire comes due and waits at most TaskOptions.OverlapGrace for it:
	// a job that ignores its context is recorded cancelled (terminated)
	// and left to return on its own while the new fire runs.
	OverlapTerminate OverlapPolicy = "terminate"
	// OverlapAllowAll starts every fire as it comes due, the runs before
	// it still running, at most TaskOptions.OverlapLimit at once on the
	// node that holds the task: a fire due at the limit is skipped and
	// recorded so. The task's row moves on to its next fire as soon as a
	// run starts; each run is recorded when its job returns.
	OverlapAllowAll OverlapPolicy = "allow_all"
)

// DefaultOverlapLimit bounds the runs of an OverlapAllowAll task at once
// when TaskOptions.OverlapLimit is 0; MaxOverlapLimit is the largest
// limit accepted.
const (
	DefaultOverlapLimit = 10
	MaxOverlapLimit     = 1000
)

// BufferLimit bounds the fires OverlapBufferAll keeps behind one run.
const BufferLimit = 1000

// DefaultOverlapGrace is OverlapTerminate's wait for a cancelled job when
// TaskOptions.OverlapGrace is 0.
const DefaultOverlapGrace = 10 * time.Second

// Valid reports whether p is a known policy.
func (p OverlapPolicy) Valid() bool {
	switch p {
	case OverlapWait, OverlapSkip, OverlapBufferOne, OverlapBufferAll, OverlapCancel, OverlapTerminate, OverlapAllowAll:
		return true
	}
	return false
}

// String names the policy ("wait" for the default).
func (p OverlapPolicy) String() string {
	if p == OverlapWait {
		return "wait"
	}
	return string(p)
}

// ParseOverlapPolicy parses a policy's name, "wait" or "" for the default.
func ParseOverlapPolicy(s string) (OverlapPolicy, error) {
	if s == "wait" {
		return OverlapWait, nil
	}
	if p := OverlapPolicy(s); p.Valid() {
		return p, nil
	}
	return "", fmt.Errorf("easyjob: unknown overlap policy %q (wait, skip, buffer_one, buffer_all, cancel, terminate, allow_all)", s)
}

// TaskOptions are the per-task policies, stored with the task row.
type TaskOptions struct {
	Timezone         string        `json:"tz,omitempty"`
	Misfire          MisfireAction `json:"misfire,omitempty"`
	MisfireThreshold time.Duration `json:"misfire_threshold,omitempty"`
	CatchUpMax       int           `json:"catch_up_max,omitempty"`
	Timeout          time.Duration `json:"timeout,omitempty"`
	MaxRetries       int           `json:"max_retries,omitempty"`
	RetryBackoff     time.Duration `json:"retry_backoff,omitempty"`
	Recover          RecoverPolicy `json:"recover,omitempty"`
	// EveryFromCreation anchors an @every schedule at the task's
	// creation (Task.CreatedAt, to the second) instead of the epoch.
	EveryFromCreation bool `json:"every_from_creation,omitempty"`
	// Start and End bound the task's fires (UTC, whole seconds): none
	// before Start, none after End, when the task finishes; zero for no
	// bound.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// Calendar names the group's exclusion calendar (Calendar) whose
	// dates the task does not fire on: such a fire is skipped, recorded
	// so; "" for none.
	Calendar string `json:"calendar,omitempty"`
	// Jitter delays each cron fire by up to this much: a delay hashed
	// from the task and the fire (the same on every node), so that many
	// tasks on one cron do not start in the same millisecond. 0: none.
	Jitter time.Duration `json:"jitter,omitempty"`
	// Spread moves the task's whole grid later by an offset in
	// [0, Spread) hashed from its name (the same on every node): its
	// stored fire times are the cron's + that offset, so many tasks on
	// one cron come due over the window. 0: none.
	Spread time.Duration `json:"spread,omitempty"`
	// PauseAfter pauses the task when this many runs in a row failed or
	// timed out (Task.Failures), recorded in the audit log; 0: never.
	PauseAfter int `json:"pause_after,omitempty"`
	// Overlap is what a fire due while the previous run still runs does.
	Overlap OverlapPolicy `json:"overlap,omitempty"`
	// OverlapGrace is how long OverlapTerminate waits for a cancelled job
	// (0: DefaultOverlapGrace).
	OverlapGrace time.Duration `json:"overlap_grace,omitempty"`
	// OverlapLimit bounds the runs of an OverlapAllowAll task at once
	// (0: DefaultOverlapLimit).
	OverlapLimit int `json:"overlap_limit,omitempty"`
	// MaxFires finishes the task once this many of its fires ran
	// (Task.Fires); 0: no bound.
	MaxFires int64 `json:"max_fires,omitempty"`
	// Broadcast runs each fire once on every live node that registers the
	// task, instead of once in the group: no node claims the row; each
	// records its own run (RunStore.StartBroadcast).
	Broadcast bool `json:"broadcast,omitempty"`
	// Daemon keeps the task's run going on one node at a time: it has no
	// cron; the row is due at once, and again a backoff after each run
	// ends (DaemonRestart).
	Daemon bool `json:"daemon,omitempty"`
	// Parents are the tasks a DAG step runs after (easyjob.Parents): it
	// runs for a fire once every parent's run of that fire counts under
	// OnParentFailure. Empty for any other task.
	Parents Names `json:"parents,omitempty"`
	// OnParentFailure is the step's policy when a parent's run fails.
	OnParentFailure ParentFailure `json:"on_parent_failure,omitempty"`
	// Shards splits each fire into that many shard runs (easyjob.Shards);
	// 0 or 1 for none. ShardOf names the sharded task on the rows of its
	// shards, Shard is the shard's index (0-based).
	Shards  int    `json:"shards,omitempty"`
	ShardOf string `json:"shard_of,omitempty"`
	Shard   int    `json:"shard,omitempty"`
	// Followed says that chain children or DAG steps follow the task (set
	// by registration): tools read the group's rows to draw its graph
	// only for a task in one.
	Followed bool `json:"followed,omitempty"`
}

// InGraph reports whether row t is in a chain or a DAG: a step, a shard,
// a sharded task, or one that steps follow.
func (t Task) InGraph() bool {
	o := t.Options
	return t.ParentID != 0 || o.Parents != "" || o.Shards > 1 || o.ShardOf != "" || o.Followed
}

// Daemon restarts: a daemon that returned (or was cancelled) starts again
// DaemonRestart later; one that failed n times in a row after
// DaemonRestart doubled n-1 times, at most MaxDaemonBackoff.
const (
	DaemonRestart    = time.Second
	MaxDaemonBackoff = time.Minute
)

// Task is one row of the tasks table.
type Task struct {
	ID            TaskID
	Group         string
	Name          string
	Cron          string // empty for a child that runs after every parent success
	ParentID      TaskID // 0 for a root task
	Status        TaskStatus
	Version       int64
	NodeID        NodeID // the claimer while Status is doing, else 0
	NextStartTime time.Time
	// Attempt is the attempt number of the fire at NextStartTime (1 = first
	// try; > 1 = a retry).
	Attempt int
	// Paused is set by Pause even while a fire is running; the finish of
	// that fire then parks the task in TaskPaused instead of rescheduling.
	Paused bool
	// TriggerRequested is set by Trigger while the task is doing; its finish
	// then schedules one extra fire at once.
	TriggerRequested bool
	// FireKind is RunManual while the pending fire is an operator's
	// trigger, else "" (the cron's, or a retry's).
	FireKind   RunKind
	Options    TaskOptions
	LastStatus ExecStatus
	LastError  string
	// Failures counts the task's runs that failed or timed out since its
	// last success (its finishes, on whichever node).
	Failures       int
	LastFinishedAt time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// CodeCron is the cron the code registered last (TaskDef.Cron); Cron
	// is the one in force. They differ while an operator's Reschedule
	// overrides the code.
	CodeCron string
	// OverriddenAt is when an operator rescheduled the task to a cron other
	// than CodeCron; zero when Cron is the code's. The override holds across
	// registrations of the same code cron and yields to a different one.
	OverriddenAt time.Time
	// StaleSince is when MarkStale first found that no live node registers
	// the task; zero while one does (or when nobody checked).
	StaleSince time.Time
	// Handler is the kind of code that runs the task: the task's own name
	// for a registered task, the handler kind (easyjob.Handle) for a
	// schedule created at runtime. DueQuery.Handlers selects on it.
	Handler string
	// Dynamic marks a schedule created at runtime (CreateSchedules): its
	// definition lives in the store; no registration writes, marks stale
	// or removes it.
	Dynamic bool
	// Args are the schedule's arguments, JSON text; "" when it has none.
	// (Text, not json.RawMessage: a Task is a comparable value.)
	Args string
	// FireArgs are the arguments of the pending manual fire (Trigger with
	// arguments), "" otherwise. The finish of that fire clears them; a
	// trigger on a doing task keeps them for the extra fire.
	FireArgs string
	// Revision counts the edits of the definition (UpdateSchedule,
	// Reschedule), from 1. A finish of a fire that ran an older revision
	// (Finish.Revision) does not keep the claim, and the row's next fire
	// stands, as when the cron changed.
	Revision int64
	// BackfillNext is the nominal time of the next fire of a backfill an
	// operator asked for (Client.Backfill), zero when none is pending;
	// BackfillTo is the end of its range. NextStartTime stays the cron's
	// own next fire meanwhile: the row is due at the earlier of the two
	// (DueAt), and a claim of it runs the backfill fire first (a manual
	// fire goes before it).
	BackfillNext time.Time
	BackfillTo   time.Time
	// BackfillAt is when the backfill was asked for (the store's clock):
	// a chain's backfill fire resumes only the runs of it since then.
	BackfillAt time.Time
	// Fires counts the runs of the task's fires (not retries, chain steps
	// or backfills), which its MaxFires option compares with.
	Fires int64
}

// DueAt is when the row's pending fire is due: its next fire, or its
// next backfill fire when that is earlier (it is in the past: at once).
func (t Task) DueAt() time.Time {
	if !t.BackfillNext.IsZero() && t.BackfillNext.Before(t.NextStartTime) {
		return t.BackfillNext
	}
	return t.NextStartTime
}

// RunsBackfill reports whether a claim of t runs its pending backfill
// fire (rather than its next fire: a manual fire goes first).
func (t Task) RunsBackfill() bool {
	return !t.BackfillNext.IsZero() && t.FireKind != RunManual
}

// RunArgs are the arguments the pending fire of t runs with: a manual
// fire's own (FireArgs), else the schedule's.
func (t Task) RunArgs() string {
	if t.FireArgs != "" {
		return t.FireArgs
	}
	return t.Args
}

// Overridden reports whether an operator's cron is in force instead of
// the code's.
func (t Task) Overridden() bool { return !t.OverriddenAt.IsZero() }

// Ref returns the (id, version) pair a claim is made against.
func (t Task) Ref() TaskRef { return TaskRef{ID: t.ID, Version: t.Version} }

// Claim returns the fencing token of a task held by its NodeID.
func (t Task) Claim() Claim { return Claim{ID: t.ID, Version: t.Version, NodeID: t.NodeID} }

// TaskRef names a task row at a version.
type TaskRef struct {
	ID      TaskID
	Version int64
}

// Claim is the fencing token of a claimed task: every write that depends
// on the claim matches all three fields.
type Claim struct {
	ID      TaskID
	Version int64
	NodeID  NodeID
}

// TaskDef is one registered task, as UpsertTasks writes it.
type TaskDef struct {
	Name    string
	Cron    string
	Parent  string // parent task name, "" for a root
	Options TaskOptions
	// NextStartTime is the first fire computed by the caller from the store
	// clock. It is written for new rows and for rows whose cron or time zone
	// changed; other rows keep their schedule.
	NextStartTime time.Time
	// Finished marks a cron that has no fire time at all.
	Finished bool
}
