package easyjob

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/instrument"
)

// Client runs the control operations (trigger, pause, resume, reschedule,
// history, status) against the schedule of one group. It needs only the
// database: no node has to run in the calling process, and every running
// node sees the effect (Postgres wakes them with NOTIFY). A Client is safe
// for concurrent use.
//
// None of the operations disturbs a fire that is running: they set a flag
// or change the schedule, and the fire's finish applies it.
type Client struct {
	store   repository.Control
	group   string
	live    time.Duration
	dead    time.Duration
	actor   Actor // recorded when the context names none (WithActor)
	closeFn func()
}

// NewClient opens the store cfg names (Store, BunDB, DB, DSN, as for Run;
// a Postgres schema is migrated unless cfg.SkipMigrate) for the group
// cfg.Group. Only the store selection, Group, LiveAfter, DeadAfter and
// HeartbeatInterval matter. Close releases what NewClient opened.
func NewClient(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	store, closeFn, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	store = instrument.Wrap(store, cfg.callBounds())
	return &Client{store: store, group: cfg.Group, live: cfg.LiveAfter, dead: cfg.DeadAfter, actor: defaultActor(), closeFn: closeFn}, nil
}

// Close releases the connection pool NewClient opened (not a Store, BunDB
// or DB the caller passed in). It is safe to call more than once.
func (c *Client) Close() error {
	if c.closeFn != nil {
		c.closeFn()
		c.closeFn = nil
	}
	return nil
}

// WithGroup returns a client of group over c's store and settings (its
// connection pool shared): the dashboard's and the CLI's way to act on
// several groups of one database. Closing it releases nothing; close c.
func (c *Client) WithGroup(group string) *Client {
	d := *c
	d.group, d.closeFn = group, nil
	return &d
}

// Control is the client's store as the operator's tools read it: the
// dashboard builds its views over it. Reads of other groups are the
// caller's business; Group names the client's.
func (c *Client) Control() repository.Control { return c.store }

// LiveAfter is how recent a heartbeat keeps a node live in the client's
// judgement (Config.LiveAfter).
func (c *Client) LiveAfter() time.Duration { return c.live }

// Group returns the group the client acts on.
func (c *Client) Group() string { return c.group }

// Now returns the store's clock, the one every time in the results refers to.
func (c *Client) Now(ctx context.Context) (time.Time, error) {
	return c.store.Now(ctx)
}

// TaskInfo is a snapshot of one task row.
type TaskInfo struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Cron   string `json:"cron"`             // empty: a child that runs after every parent success
	Parent string `json:"parent,omitempty"` // parent task name; empty for a root
	// Status is pending, doing (claimed by NodeID), paused or finished.
	Status repository.TaskStatus `json:"status"`
	// Paused is set while the task is paused, also during a fire that will
	// park it when it finishes.
	Paused bool `json:"paused"`
	// TriggerRequested: an extra fire runs right after the current one.
	TriggerRequested bool      `json:"trigger_requested"`
	NodeID           int64     `json:"node_id,omitempty"` // the claimer while doing
	NextStartTime    time.Time `json:"next_start_time"`   // store clock
	// Attempt of the fire at NextStartTime (> 1 is a retry).
	Attempt    int                   `json:"attempt"`
	Timezone   string                `json:"timezone,omitempty"`
	Version    int64                 `json:"version"`
	LastStatus repository.ExecStatus `json:"last_status,omitempty"`
	LastError  string                `json:"last_error,omitempty"`
	// Failures counts the runs that failed or timed out since the last
	// success (PauseAfterFailures compares with it).
	Failures int `json:"failures,omitempty"`
	// Fires counts the fires the task has run (MaxFires compares with it).
	Fires int64 `json:"fires,omitempty"`
	// BackfillNext is the nominal time of the next fire of a backfill in
	// progress (Backfill), whose range ends at BackfillTo; zero when none.
	BackfillNext   time.Time `json:"backfill_next,omitzero"`
	BackfillTo     time.Time `json:"backfill_to,omitzero"`
	LastFinishedAt time.Time `json:"last_finished_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	// CodeCron is the cron the code registers; Cron differs from it while
	// an operator's Reschedule overrides it (Overridden, since
	// OverriddenAt). The override holds across restarts and deploys of the
	// same code and yields to a different cron in code (or ResetSchedule).
	CodeCron     string    `json:"code_cron"`
	Overridden   bool      `json:"overridden"`
	OverriddenAt time.Time `json:"overridden_at,omitzero"`
	// Stale: no live node registers the task (it was removed from the code,
	// or its service stopped); it will not fire. Set by Task and Tasks.
	// See Remove and Config.StaleTaskExpiry.
	Stale bool `json:"stale"`
	// Dynamic marks a schedule created at runtime (Client.Create), run by
	// the handler of kind Handler with Args; Revision counts the edits of
	// its definition (Update, Reschedule).
	Dynamic  bool            `json:"dynamic,omitempty"`
	Handler  string          `json:"handler,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	Revision int64           `json:"revision,omitempty"`
	// Waiting: a runtime schedule whose handler no live node registers; it
	// fires once a node with that handler runs. Set by Task and Tasks.
	Waiting bool `json:"waiting,omitempty"`
	// Broadcast: each fire runs on every live node that registers the
	// task (the Broadcast option); no node claims it.
	Broadcast bool `json:"broadcast,omitempty"`
	// Daemon: the task's run is kept going on one node at a time (the
	// Daemon option); it has no cron.
	Daemon bool `json:"daemon,omitempty"`
	// Parents are a DAG step's parents (the Parents option); Shards the
	// number of shards of a sharded task, and ShardOf the task a shard's
	// row belongs to (its shard: Shard).
	Parents []string `json:"parents,omitempty"`
	Shards  int      `json:"shards,omitempty"`
	ShardOf string   `json:"shard_of,omitempty"`
	Shard   int      `json:"shard,omitempty"`
	// Options are the task's policies as stored (time zone, timeout,
	// retries, misfire, overlap, ...; durations in nanoseconds): what
	// OptionsOf turns back into Options.
	Options repository.TaskOptions `json:"options"`
}

// HistoryFilter selects and pages executions, newest first: Status ("" for
// all), Since (started at or after), BeforeID (the next page starts below
// the last ID seen) and Limit (0 means 100).
type HistoryFilter = repository.HistoryFilter

// ExecutionInfo is one run (one attempt at one fire) of a task.
type ExecutionInfo struct {
	ID                int64  `json:"id"`
	Task              string `json:"task"`
	TaskID            int64  `json:"task_id"`
	ParentExecutionID int64  `json:"parent_execution_id,omitempty"` // the parent's run, for a child
	NodeID            int64  `json:"node_id"`
	// ScheduledAt is the fire time; StartedAt and FinishedAt (zero while
	// running) are store clock.
	ScheduledAt time.Time             `json:"scheduled_at"`
	StartedAt   time.Time             `json:"started_at"`
	FinishedAt  time.Time             `json:"finished_at"`
	Status      repository.ExecStatus `json:"status"`
	Error       string                `json:"error,omitempty"`
	Attempt     int                   `json:"attempt"`
	// Misfire names the misfire policy applied when the fire was late.
	Misfire string `json:"misfire,omitempty"`
	// Kind says why the run ran: cron, manual (an operator's trigger),
	// retry, misfire, chain, buffered (after an overlapping run) or
	// backfill; "" for a run recorded before kinds were.
	Kind RunKind `json:"kind,omitempty"`
	// Args are the arguments the run ran with (a schedule's, or a
	// trigger's WithArgs); Revision is the revision of the task's
	// definition it ran (0 for a run recorded before revisions were).
	Args     json.RawMessage `json:"args,omitempty"`
	Revision int64           `json:"revision,omitempty"`
	// Shard is the run's shard of a sharded task (Shards), Shards their
	// number; nil and 0 for any other run.
	Shard  *int `json:"shard,omitempty"`
	Shards int  `json:"shards,omitempty"`
}

// RunKind says why a run ran.
type RunKind = repository.RunKind

// Run kinds (ExecutionInfo.Kind).
const (
	RunCron    = repository.RunCron    // the cron came due
	RunManual  = repository.RunManual  // an operator's trigger (Client.Trigger)
	RunRetry   = repository.RunRetry   // a retry of a failed run
	RunMisfire = repository.RunMisfire // a late fire, run by its misfire policy
	RunChain   = repository.RunChain   // a chain step, after its parent's success
	// RunBuffered: a fire due while the previous run ran, run after it
	// (Overlap policies buffer_one, buffer_all, cancel, terminate).
	RunBuffered = repository.RunBuffered
	// RunBackfill: a fire of a past range (Client.Backfill), recorded
	// with its nominal time.
	RunBackfill = repository.RunBackfill
)

// Duration is how long the run took, 0 while it runs.
func (e ExecutionInfo) Duration() time.Duration {
	if e.FinishedAt.IsZero() {
		return 0
	}
	return e.FinishedAt.Sub(e.StartedAt)
}

// NodeInfo is a snapshot of one node row, judged by the store's clock.
type NodeInfo struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Weight int    `json:"weight"`
	Counts int64  `json:"counts"` // executions finished in the last 10 complete seconds
	// Live: heartbeated within LiveAfter and not leaving; it takes part in
	// claiming.
	Live bool `json:"live"`
	// Leaving: shutting down gracefully; not live, not recovered while it
	// still heartbeats.
	Leaving bool `json:"leaving,omitempty"`
	// Dead: silent longer than DeadAfter; its tasks are being recovered.
	// A node neither live nor dead is suspect.
	Dead bool `json:"dead"`
	// RowNumber is the 1-based position among live nodes sorted by id (the
	// row number the strategies use), 0 when not live.
	RowNumber int `json:"row_number"`
	// HeartbeatAge is written to JSON in seconds (heartbeat_age_seconds).
	HeartbeatAge time.Duration `json:"-"`
	StartedAt    time.Time     `json:"started_at"`
	HeartbeatAt  time.Time     `json:"heartbeat_at"`
	// InFlight counts the doing tasks it has claimed (queued or running).
	InFlight int `json:"in_flight"`
}

// MarshalJSON writes n with its heartbeat age in seconds.
func (n NodeInfo) MarshalJSON() ([]byte, error) {
	type plain NodeInfo // without this method
	return json.Marshal(struct {
		plain
		HeartbeatAge float64 `json:"heartbeat_age_seconds"`
	}{plain(n), seconds(n.HeartbeatAge)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (n *NodeInfo) UnmarshalJSON(b []byte) error {
	type plain NodeInfo
	var v struct {
		plain
		HeartbeatAge float64 `json:"heartbeat_age_seconds"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = NodeInfo(v.plain)
	n.HeartbeatAge = fromSeconds(v.HeartbeatAge)
	return nil
}

// seconds is d in seconds, to the millisecond, for JSON.
func seconds(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

// fromSeconds is the inverse of seconds.
func fromSeconds(s float64) time.Duration {
	return time.Duration(math.Round(s*1000)) * time.Millisecond
}

// Cancel asks the node running the task's fire to cancel its job's
// context: within about a second (the nodes read requests each heartbeat
// interval while they run jobs), the job sees ctx.Done() and
// context.Cause(ctx) says who cancelled it. A run that then returns an
// error is recorded with status cancelled, naming the actor; one that
// finishes its work and returns nil is recorded succeeded. A job still
// running 10 s after the cancel is reported by its node's log as ignoring
// its context. Runs of fires due after the request are not touched.
// Cancelling a step of a chain cancels that chain's run; its later steps
// do not run and the chain is not resumed. The request is recorded in the
// audit log. ErrNotRunning if no run of the task is in progress.
func (c *Client) Cancel(ctx context.Context, name string) error {
	_, err := c.store.Cancel(c.audited(ctx, "cancel", name, ""), c.group, name)
	if err != nil {
		return c.wrap("cancel", name, err)
	}
	return nil
}

// Trigger asks for one fire of the task as soon as possible. A paused task
// runs once and stays paused; a task whose fire is running runs once more
// right after it (never concurrently). The returned row is as written.
//
// A trigger that nothing would run is refused with ErrNotTriggerable,
// and nothing is written: a chain step (it runs when its parent
// succeeds: trigger the chain's root), or a task that live nodes run but
// none registers (its code is not deployed). With no live node at all the
// trigger is written and runs when a node that registers the task starts.
// WithArgs gives the fire its own arguments, checked like Create's.
func (c *Client) Trigger(ctx context.Context, name string, opts ...TriggerOption) (TaskInfo, error) {
	var o triggerOpts
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if err := c.triggerable(ctx, name); err != nil {
		return TaskInfo{}, err
	}
	args, err := c.triggerArgs(ctx, name, o)
	if err != nil {
		return TaskInfo{}, err
	}
	detail := ""
	if args != "" {
		detail = "args " + args
	}
	t, err := c.store.Trigger(c.audited(ctx, "trigger", name, detail), c.group, name, args)
	if err != nil {
		return TaskInfo{}, c.wrap("trigger", name, err)
	}
	return c.info(ctx, t)
}

// MaxBackfill bounds the fires one Backfill may ask for.
const MaxBackfill = 10000

// Backfill runs the task for every fire it would have had from `from` to
// `to` (both included, in the past), within its window: one after
// another, each recorded with its nominal time and kind backfill, on
// whichever node claims them (a takeover resumes the range where it was).
// The task's own next fire does not move; cron fires that come due while
// the backfill runs follow its overlap policy once it ends. A fire its
// exclusion calendar excludes is recorded skipped, as at its time; a
// failed backfill fire is not retried. It returns the fires asked for.
//
// Refused, with nothing written: an empty, future or over-long range
// (more than MaxBackfill fires) and a chain step or a finished task, with
// ErrInvalidBackfill; a task with a backfill in progress, with
// ErrBackfillInProgress; a task no live node registers, with
// ErrNotTriggerable.
func (c *Client) Backfill(ctx context.Context, name string, from, to time.Time) ([]time.Time, error) {
	if err := c.triggerable(ctx, name); err != nil {
		return nil, err
	}
	t, err := c.store.Task(ctx, c.group, name)
	if err != nil {
		return nil, c.wrap("backfill", name, err)
	}
	now, err := c.store.Now(ctx)
	if err != nil {
		return nil, c.wrap("backfill", name, err)
	}
	fires, err := backfillFires(t, from, to, now)
	if err != nil {
		return nil, fmt.Errorf("easyjob: backfill %q: %w", name, err)
	}
	detail := fmt.Sprintf("%d fires from %s to %s", len(fires), fires[0].Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	if _, err := c.store.Backfill(c.audited(ctx, "backfill", name, detail), c.group, name, fires[0], to); err != nil {
		return nil, c.wrap("backfill", name, err)
	}
	return fires, nil
}

// backfillFires checks a backfill of task t from `from` to `to` at store
// time now, and returns its fires.
func backfillFires(t repository.Task, from, to, now time.Time) ([]time.Time, error) {
	switch {
	case t.Status == repository.TaskFinished:
		return nil, fmt.Errorf("%w: the task is finished (its schedule has no further fire)", ErrInvalidBackfill)
	case !to.After(from):
		return nil, fmt.Errorf("%w: the range's end %s must be after its start %s", ErrInvalidBackfill,
			to.UTC().Format(time.RFC3339), from.UTC().Format(time.RFC3339))
	case to.After(now):
		return nil, fmt.Errorf("%w: the range's end %s is in the future (now %s): a backfill runs past fires",
			ErrInvalidBackfill, to.UTC().Format(time.RFC3339), now.Format(time.RFC3339))
	}
	sched, err := schedule.Parse(t.Cron, t.Options.Timezone)
	if err != nil {
		return nil, err
	}
	sched = sched.ForTask(t.Name, t.Options, t.CreatedAt)
	var fires []time.Time
	for at, ok := sched.Next(from.Add(-time.Nanosecond)); ok && !at.After(to); at, ok = sched.Next(at) {
		if len(fires) == MaxBackfill {
			return nil, fmt.Errorf("%w: more than %d fires from %s to %s: backfill a shorter range", ErrInvalidBackfill,
				MaxBackfill, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
		}
		fires = append(fires, at)
	}
	if len(fires) == 0 {
		return nil, fmt.Errorf("%w: the task has no fire from %s to %s", ErrInvalidBackfill,
			from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	return fires, nil
}

// triggerable refuses a trigger no node would run.
func (c *Client) triggerable(ctx context.Context, name string) error {
	t, err := c.store.Task(ctx, c.group, name)
	if err != nil {
		return c.wrap("trigger", name, err)
	}
	if t.ParentID != 0 {
		info, err := c.info(ctx, t)
		if err != nil {
			return err
		}
		root, err := c.rootOf(ctx, t)
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: %q is a step of a chain: it runs after its parent %q succeeds; trigger the chain's root %q",
			ErrNotTriggerable, name, info.Parent, root)
	}
	if t.Options.Broadcast {
		return fmt.Errorf("%w: %q is a broadcast task: it runs on every node at its cron's fires only (no trigger, no backfill)",
			ErrNotTriggerable, name)
	}
	live, err := repository.LiveTaskSets(ctx, c.store, c.group, c.live)
	if err != nil {
		return fmt.Errorf("easyjob: trigger %q: read live nodes: %w", name, err)
	}
	if len(live) == 0 {
		return nil // runs when a node starts
	}
	if registered(live, handlerOf(t)) {
		return nil
	}
	return fmt.Errorf("%w: none of the %d live node(s) of group %q registers %q (its code is not deployed): nothing would run it",
		ErrNotTriggerable, len(live), c.group, name)
}

// rootOf returns the name of the root of t's chain.
func (c *Client) rootOf(ctx context.Context, t repository.Task) (string, error) {
	ts, err := c.chain(ctx, t.Name)
	if err != nil {
		return "", fmt.Errorf("easyjob: read the chain of %q: %w", t.Name, err)
	}
	for _, x := range ts {
		if x.ParentID == 0 {
			return x.Name, nil
		}
	}
	return t.Name, nil
}

// chain reads the chain of the task name (its root and the root's
// descendants, by id): what a lookup of parents or children needs, read
// at a cost that follows the chain, not the group.
func (c *Client) chain(ctx context.Context, name string) ([]repository.Task, error) {
	rows, err := c.store.TaskTree(ctx, c.group, name, c.live)
	if err != nil {
		return nil, err
	}
	ts := make([]repository.Task, len(rows))
	for i, r := range rows {
		ts[i] = r.Task
	}
	return ts, nil
}

// Pause stops future fires of the task. A fire that is running completes
// and is recorded; the task then parks as paused. A daemon's run, which
// does not complete on its own, is cancelled (Cancel).
func (c *Client) Pause(ctx context.Context, name string) (TaskInfo, error) {
	info, err := c.control(ctx, "pause", name, c.store.Pause)
	if err != nil || !info.Daemon || info.Status != repository.TaskDoing {
		return info, err
	}
	if err := c.cancelDaemon(ctx, name); err != nil {
		return info, fmt.Errorf("easyjob: paused daemon %q, but could not cancel its run: %w", name, err)
	}
	return info, nil
}

// cancelDaemon cancels the run of daemon name, paused. A run started
// less than a couple of seconds ago may not be recorded yet (its start is
// written StartRecordAfter after it), and a cancel finds only recorded
// runs: it is asked again until the run is, or the task no longer holds
// a claim (the run ended), for at most daemonCancelWait.
func (c *Client) cancelDaemon(ctx context.Context, name string) error {
	deadline := time.Now().Add(daemonCancelWait)
	for {
		_, err := c.store.Cancel(c.audited(ctx, "cancel", name, "the daemon was paused"), c.group, name)
		if !errors.Is(err, ErrNotRunning) {
			return err
		}
		t, err := c.store.Task(ctx, c.group, name)
		if err != nil || t.Status != repository.TaskDoing || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// daemonCancelWait bounds how long a pause waits for a daemon's run to be
// recorded (node.StartRecordAfter, and a margin) to cancel it.
const daemonCancelWait = 5 * time.Second

// Resume lets a paused task fire again; a fire that came due while it was
// paused is subject to the task's misfire policy.
func (c *Client) Resume(ctx context.Context, name string) (TaskInfo, error) {
	return c.control(ctx, "resume", name, c.store.Resume)
}

// Reschedule gives the task a new cron expression (evaluated in the task's
// time zone) and moves its next fire to the first fire of the new cron
// after the store's now. A fire a node has already claimed (queued or
// running) still happens once, at its old time; the fires after it follow
// the new cron (never a double fire). The change lasts until a deploy
// registers a different cron for the task. An invalid expression returns
// an error wrapping ErrInvalidCron.
func (c *Client) Reschedule(ctx context.Context, name, cron string) (TaskInfo, error) {
	return c.reschedule(ctx, "reschedule", name, cron)
}

// reschedule is Reschedule, recorded in the audit log as action.
func (c *Client) reschedule(ctx context.Context, action, name, cron string) (TaskInfo, error) {
	t, err := c.store.Task(ctx, c.group, name)
	if err != nil {
		return TaskInfo{}, c.wrap("reschedule", name, err)
	}
	sched, err := schedule.Parse(cron, t.Options.Timezone)
	if err != nil {
		return TaskInfo{}, fmt.Errorf("easyjob: reschedule %q: %w", name, err)
	}
	if sched.Empty() && t.ParentID == 0 {
		return TaskInfo{}, fmt.Errorf("%w: reschedule %q: a root task needs a cron expression", ErrInvalidCron, name)
	}
	now, err := c.store.Now(ctx)
	if err != nil {
		return TaskInfo{}, c.wrap("reschedule", name, err)
	}
	sched = sched.ForTask(t.Name, t.Options, t.CreatedAt)
	next := nextFires(sched, now)
	if len(next) == 0 {
		next = []time.Time{now} // an empty cron (a child): due with its parent's next success
	}
	detail := fmt.Sprintf("cron %q -> %q", t.Cron, cron)
	row, err := c.store.Reschedule(c.audited(ctx, action, name, detail), c.group, name, cron, next)
	if err != nil {
		return TaskInfo{}, c.wrap("reschedule", name, err)
	}
	return c.info(ctx, row)
}

// Task returns one task (with Stale set).
func (c *Client) Task(ctx context.Context, name string) (TaskInfo, error) {
	t, err := c.store.Task(ctx, c.group, name)
	if err != nil {
		return TaskInfo{}, c.wrap("read", name, err)
	}
	info, err := c.info(ctx, t)
	if err != nil {
		return TaskInfo{}, err
	}
	one := []TaskInfo{info}
	if err := c.markStale(ctx, one); err != nil {
		return TaskInfo{}, c.wrap("read", name, err)
	}
	return one[0], nil
}

// Tasks lists every task of the group ordered by id (with Stale set).
func (c *Client) Tasks(ctx context.Context) ([]TaskInfo, error) {
	ts, err := c.store.Tasks(ctx, c.group)
	if err != nil {
		return nil, fmt.Errorf("easyjob: list tasks of group %q: %w", c.group, err)
	}
	out := taskInfos(ts, ts)
	if err := c.markStale(ctx, out); err != nil {
		return nil, fmt.Errorf("easyjob: list tasks of group %q: %w", c.group, err)
	}
	return out, nil
}

// TaskQuery selects and pages the tasks Client.ListTasks lists: filters
// (name search, status, paused, failing, stale) and a cursor, After or
// Before a name, in byte order of names.
type TaskQuery = repository.TaskQuery

// TaskList is one page of Client.ListTasks: its tasks, how many match in
// all (Capped: at least that many, the count stopping at
// repository.TaskCountLimit), and the cursors of the pages around it
// (Prev for TaskQuery.Before, Next for TaskQuery.After; "" when there is
// no such page).
type TaskList struct {
	Tasks  []TaskInfo `json:"tasks"`
	Total  int        `json:"total"`
	Capped bool       `json:"total_capped,omitempty"`
	Prev   string     `json:"prev_before,omitempty"`
	Next   string     `json:"next_after,omitempty"`
}

// ListTasks lists one page of the group's tasks matching q, by name, with
// Stale and Waiting set. Its cost follows the page, not the group: use it
// rather than Tasks on a group of many runtime schedules.
func (c *Client) ListTasks(ctx context.Context, q TaskQuery) (TaskList, error) {
	q.LiveWithin = c.live
	p, err := c.store.TaskPage(ctx, c.group, q)
	if err != nil {
		return TaskList{}, fmt.Errorf("easyjob: list tasks of group %q: %w", c.group, err)
	}
	out := TaskList{Tasks: make([]TaskInfo, len(p.Rows)), Total: p.Total, Capped: p.TotalCapped}
	for i, r := range p.Rows {
		out.Tasks[i] = TaskInfoOf(r.Task, r.Parent)
	}
	if err := c.markStale(ctx, out.Tasks); err != nil {
		return TaskList{}, fmt.Errorf("easyjob: list tasks of group %q: %w", c.group, err)
	}
	if p.HasPrev {
		out.Prev = p.Prev(q).Before
	}
	if p.HasNext {
		out.Next = p.Next(q).After
	}
	return out, nil
}

// History lists runs of the task, newest first, selected and paged by f:
// pass the ID of the last run of a page as f.BeforeID for the next one.
func (c *Client) History(ctx context.Context, name string, f HistoryFilter) ([]ExecutionInfo, error) {
	if t, err := c.store.Task(ctx, c.group, name); err == nil && t.Options.Shards > 1 && t.Options.ShardOf == "" {
		return c.shardHistory(ctx, name, t.Options.Shards, f)
	}
	xs, err := c.store.History(ctx, c.group, name, f)
	if err != nil {
		return nil, c.wrap("history of", name, err)
	}
	out := ExecutionInfos(xs) // client_views.go
	for i := range out {
		if out[i].Task == "" {
			out[i].Task = name
		}
	}
	return out, nil
}

// shardHistory is History of a task split into n shards (Shards): the
// runs of its shards' rows ("name[i]"), newest first, each under the
// task's name with its shard; the task's own runs (its splits) are left
// out.
func (c *Client) shardHistory(ctx context.Context, name string, n int, f HistoryFilter) ([]ExecutionInfo, error) {
	var out []ExecutionInfo
	for i := range n {
		xs, err := c.store.History(ctx, c.group, fmt.Sprintf("%s[%d]", name, i), f)
		if errors.Is(err, repository.ErrTaskNotFound) {
			continue // a shard added by a later registration, not written yet
		}
		if err != nil {
			return nil, c.wrap("history of", name, err)
		}
		for _, x := range ExecutionInfos(xs) {
			x.Task, x.Shard, x.Shards = name, &i, n
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b ExecutionInfo) int { return cmp.Compare(b.ID, a.ID) })
	if limit := cmp.Or(f.Limit, 100); len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// RunLog is one run and the lines its job logged through Logger.
type RunLog struct {
	Run ExecutionInfo `json:"run"`
	// Log is logfmt text, one line per record (time, level, msg, then
	// the record's attributes); the last line counts the lines cut when
	// the run logged more than Config.RunLogLimit.
	Log string `json:"log"`
}

// RunLog reads the log of run id of the task (an ExecutionInfo.ID); id 0
// reads the newest run's. A running job's log is as of its last store,
// at most a second old.
func (c *Client) RunLog(ctx context.Context, name string, id int64) (RunLog, error) {
	if id == 0 {
		xs, err := c.store.History(ctx, c.group, name, HistoryFilter{Limit: 1})
		if err != nil {
			return RunLog{}, c.wrap("log of", name, err)
		}
		if len(xs) == 0 {
			return RunLog{}, fmt.Errorf("%w: task %q in group %q has not run", ErrRunNotFound, name, c.group)
		}
		id = xs[0].ID
	}
	r, err := c.store.RunLog(ctx, c.group, name, id)
	if err != nil {
		return RunLog{}, c.wrap("log of", name, err)
	}
	return RunLog{Run: ExecutionInfos([]repository.Execution{r.Execution})[0], Log: r.Log}, nil
}

// Nodes lists every node row of the group ordered by id, judged live or
// dead by the store's clock and the client's LiveAfter and DeadAfter.
func (c *Client) Nodes(ctx context.Context) ([]NodeInfo, error) {
	now, err := c.store.Now(ctx)
	if err != nil {
		return nil, fmt.Errorf("easyjob: list nodes of group %q: %w", c.group, err)
	}
	ns, err := c.store.Nodes(ctx, c.group)
	if err != nil {
		return nil, fmt.Errorf("easyjob: list nodes of group %q: %w", c.group, err)
	}
	// Counted by the store, not read row by row: a group may hold a
	// million runtime schedules.
	counts, err := c.store.TaskCounts(ctx, c.group, c.live)
	if err != nil {
		return nil, fmt.Errorf("easyjob: count the claims of group %q: %w", c.group, err)
	}
	inFlight := map[repository.NodeID]int{}
	for _, k := range counts {
		if k.Status == repository.TaskDoing && k.NodeID != 0 {
			inFlight[k.NodeID] += k.Count
		}
	}
	return c.NodeInfos(ns, now, inFlight), nil
}

// PruneHistory deletes finished runs of the group's tasks that started
// more than maxAge ago (0: no age bound) or are not among the newest
// maxRows runs of their task (0: no row bound). Running executions are
// kept. It returns how many it deleted.
func (c *Client) PruneHistory(ctx context.Context, maxAge time.Duration, maxRows int) (int, error) {
	if maxAge < 0 || maxRows < 0 {
		return 0, fmt.Errorf("%w: PruneHistory needs maxAge >= 0 and maxRows >= 0 (got %v, %d)", ErrInvalidOption, maxAge, maxRows)
	}
	k, err := c.store.PruneHistory(ctx, c.group, maxAge, maxRows)
	if err != nil {
		return k, fmt.Errorf("easyjob: prune history of group %q: %w", c.group, err)
	}
	// After the prune (its batches are many statements): a failed record
	// is an error, so the log never misses a prune silently.
	e := c.entry(ctx, "prune", "", fmt.Sprintf("max age %v, max rows %d: deleted %d runs", maxAge, maxRows, k))
	if err := c.store.RecordAudit(ctx, e); err != nil {
		return k, fmt.Errorf("easyjob: pruned %d runs of group %q, but could not record it in the audit log: %w", k, c.group, err)
	}
	return k, nil
}

// control runs one store operator action and converts its row.
func (c *Client) control(ctx context.Context, op, name string,
	f func(ctx context.Context, group, name string) (repository.Task, error),
) (TaskInfo, error) {
	t, err := f(c.audited(ctx, op, name, ""), c.group, name)
	if err != nil {
		return TaskInfo{}, c.wrap(op, name, err)
	}
	return c.info(ctx, t)
}

// wrap names the task in err; an unknown task gets one short message.
func (c *Client) wrap(op, name string, err error) error {
	if errors.Is(err, ErrTaskNotFound) {
		return fmt.Errorf("%w: %q in group %q", ErrTaskNotFound, name, c.group)
	}
	return fmt.Errorf("easyjob: %s %q: %w", op, name, err)
}

// info converts a row, looking up the parent's name for a child.
func (c *Client) info(ctx context.Context, t repository.Task) (TaskInfo, error) {
	if t.ParentID == 0 {
		return TaskInfoOf(t, ""), nil
	}
	ts, err := c.chain(ctx, t.Name)
	if errors.Is(err, ErrTaskNotFound) {
		return TaskInfoOf(t, ""), nil // removed since: no chain left to name its parent
	}
	if err != nil {
		return TaskInfo{}, fmt.Errorf("easyjob: read the chain of %q: %w", t.Name, err)
	}
	for _, p := range ts {
		if p.ID == t.ParentID {
			return TaskInfoOf(t, p.Name), nil
		}
	}
	return TaskInfoOf(t, ""), nil
}

// TaskInfoOf converts a task row read from the store (Client.Control),
// parent being its parent's name ("" for a root).
func TaskInfoOf(t repository.Task, parent string) TaskInfo {
	return TaskInfo{
		ID: int64(t.ID), Name: t.Name, Cron: t.Cron, Parent: parent, Status: t.Status,
		Paused: t.Paused, TriggerRequested: t.TriggerRequested, NodeID: int64(t.NodeID),
		NextStartTime: t.NextStartTime, Attempt: t.Attempt, Timezone: t.Options.Timezone,
		Version: t.Version, LastStatus: t.LastStatus, LastError: t.LastError, Failures: t.Failures,
		Fires: t.Fires, BackfillNext: t.BackfillNext, BackfillTo: t.BackfillTo,
		LastFinishedAt: t.LastFinishedAt, UpdatedAt: t.UpdatedAt,
		CodeCron: t.CodeCron, Overridden: t.Overridden(), OverriddenAt: t.OverriddenAt,
		Dynamic: t.Dynamic, Args: rawArgs(t.Args), Revision: t.Revision, Handler: handlerOf(t),
		Broadcast: t.Options.Broadcast, Daemon: t.Options.Daemon,
		Parents: t.Options.Parents.List(), Shards: t.Options.Shards, ShardOf: t.Options.ShardOf, Shard: t.Options.Shard,
		Options: t.Options,
	}
}

// rawArgs is stored JSON text as a json.RawMessage, nil for none.
func rawArgs(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// NodeInfos judges node rows read from the store (Client.Control) by
// now and the client's LiveAfter and DeadAfter, numbering the live ones;
// inFlight counts the claims each holds.
func (c *Client) NodeInfos(ns []repository.Node, now time.Time, inFlight map[repository.NodeID]int) []NodeInfo {
	out := make([]NodeInfo, len(ns))
	row := 0
	for i, n := range ns { // sorted by id, so row numbers follow
		age := max(now.Sub(n.HeartbeatAt), 0)
		ni := NodeInfo{
			ID: int64(n.ID), Name: n.Name, Weight: n.Weight, Counts: n.Counts,
			Live: age <= c.live && !n.Leaving, Leaving: n.Leaving, Dead: age > c.dead, HeartbeatAge: age,
			StartedAt: n.StartedAt, HeartbeatAt: n.HeartbeatAt, InFlight: inFlight[n.ID],
		}
		if ni.Live {
			row++
			ni.RowNumber = row
		}
		out[i] = ni
	}
	return out
}

// AlertRules lists the group's alert rules added at runtime, by name
// (the rules in code are each node's Config.Alerts). Secrets are not
// returned.
func (c *Client) AlertRules(ctx context.Context) ([]alert.StoredRule, error) {
	rs, err := c.store.AlertRules(ctx, c.group)
	if err != nil {
		return nil, fmt.Errorf("easyjob: alert rules of group %q: %w", c.group, err)
	}
	out := make([]alert.StoredRule, len(rs))
	for i, r := range rs {
		out[i] = alert.StoredRuleOf(r)
		out[i].WebhookSecret = ""
	}
	return out, nil
}

// PutAlertRule adds a runtime alert rule, or replaces the rule of its
// name; every node applies it within Config.AlertInterval. The rule is
// checked first (alert.ErrInvalidRule) and the change audited (action
// "alert"); the secret is never recorded in the audit log.
func (c *Client) PutAlertRule(ctx context.Context, r alert.StoredRule) (alert.StoredRule, error) {
	r, err := r.Check()
	if err != nil {
		return alert.StoredRule{}, err
	}
	e := c.entry(ctx, "alert", r.Task, "put rule "+r.Name+": "+string(r.Kind))
	got, err := c.store.PutAlertRule(ctx, repository.AlertRule{
		Group: c.group, Name: r.Name, Task: r.Task, Kind: r.Kind, Count: r.Count, After: r.After,
		WebhookURL: r.WebhookURL, WebhookSecret: r.WebhookSecret, CreatedBy: e.Name,
	})
	if err != nil {
		return alert.StoredRule{}, fmt.Errorf("easyjob: put alert rule %q of group %q: %w", r.Name, c.group, err)
	}
	if err := c.store.RecordAudit(ctx, e); err != nil {
		return alert.StoredRule{}, err
	}
	out := alert.StoredRuleOf(got)
	out.WebhookSecret = ""
	return out, nil
}

// RemoveAlertRule deletes the runtime alert rule name
// (alert.ErrRuleNotFound when there is none), audited. Its open alerts
// stay open until their condition clears.
func (c *Client) RemoveAlertRule(ctx context.Context, name string) error {
	if err := c.store.RemoveAlertRule(ctx, c.group, name); err != nil {
		return fmt.Errorf("easyjob: remove alert rule %q of group %q: %w", name, c.group, err)
	}
	return c.store.RecordAudit(ctx, c.entry(ctx, "alert", "", "remove rule "+name))
}

// AlertHistory lists the group's alerts, newest first, with how their
// delivery went; f.Live keeps those open or not yet delivered.
func (c *Client) AlertHistory(ctx context.Context, f repository.AlertFilter) ([]alert.Record, error) {
	es, err := c.store.AlertEvents(ctx, c.group, f)
	if err != nil {
		return nil, fmt.Errorf("easyjob: alerts of group %q: %w", c.group, err)
	}
	out := make([]alert.Record, len(es))
	for i, e := range es {
		out[i] = alert.RecordOf(e)
	}
	return out, nil
}
