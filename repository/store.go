package repository

import (
	"context"
	"time"
)

// Store is one database as both of its users see it: a running node
// (Runtime) and the operator's tools (Control). Each method is one round
// trip where the backend allows. All times that decide anything
// (due-ness, liveness, death) are taken from the store's clock, never
// from the caller's.
type Store interface {
	Runtime
	Control
	// Close releases what the store opened itself (not a caller's *sql.DB).
	Close() error
}

// Runtime is the store as a running node uses it: register and
// heartbeat, claim, record and finish runs, recover the tasks of dead
// peers, and the group's upkeep (history retention, stale tasks). A store
// that also implements Notifier wakes the node's loader (LISTEN/NOTIFY).
type Runtime interface {
	Clock
	NodeStore
	ClaimStore
	HandlerStore
	RunStore
	RecoveryStore
	UpkeepStore
	CalendarReader
	CancelReader
	RunLogWriter
	AlertStore
	DagStore
}

// Control is the store as the operator's tools use it (easyjob.Client,
// the CLI, the dashboard): read tasks, nodes and history, act on tasks,
// and the dashboard's aggregate views.
type Control interface {
	Clock
	NodeReader
	TaskReader
	HistoryStore
	ControlStore
	CancelStore
	RunLogReader
	ScheduleStore
	RevisionStore
	HandlerStore
	ViewStore
	AuditStore
	CalendarStore
	GroupReader
	AlertStore
}

// Clock reads the store's clock, the only clock that decides anything.
type Clock interface {
	Now(ctx context.Context) (time.Time, error)
}

// NodeReader reads the node table.
type NodeReader interface {
	// LiveNodes lists nodes of group that heartbeated within the last
	// `within` and are not leaving, sorted by id.
	LiveNodes(ctx context.Context, group string, within time.Duration) ([]Node, error)
	// Nodes lists every node row of group, sorted by id.
	Nodes(ctx context.Context, group string) ([]Node, error)
	// TaskSet returns the sorted names published under id;
	// ErrTaskSetNotFound when none were.
	TaskSet(ctx context.Context, id string) ([]string, error)
}

// NodeStore keeps the node table: a node's own row, and the expiry of
// dead ones.
type NodeStore interface {
	NodeReader
	// RegisterNode inserts a node row with a fresh, larger-than-all id and
	// heartbeat_at = now.
	RegisterNode(ctx context.Context, group, name string, weight int) (Node, error)
	// Heartbeat upserts n by id with heartbeat_at = now and n's counts,
	// weight and leaving flag, and returns the row as written (HeartbeatAt is the store's now).
	// A row that was expired is re-created under the same id.
	Heartbeat(ctx context.Context, n Node) (Node, error)
	// DeleteNode removes the row so peers rebalance at once.
	DeleteNode(ctx context.Context, id NodeID) error
	// ExpireNodes deletes node rows silent for longer than deadFor that hold
	// no claims; it returns how many it deleted.
	ExpireNodes(ctx context.Context, group string, deadFor time.Duration) (int, error)
	// PublishTaskSet stores the set of task names under TaskSetID(names)
	// (idempotent; sets are immutable) and returns the id.
	PublishTaskSet(ctx context.Context, names []string) (string, error)
}

// DueQuery selects pending root tasks due within a window.
type DueQuery struct {
	Group    string
	Handlers []string      // only tasks whose Handler this node has code for
	Window   time.Duration // next_start_time <= now + Window
	Limit    int           // 0 = no limit
}

// Due is the answer to a DueQuery: the store's now and the tasks, ordered
// by next_start_time then id.
type Due struct {
	Now   time.Time
	Tasks []Task
}

// ClaimStore is how a node writes its tasks and claims them.
type ClaimStore interface {
	// UpsertTasks writes the registered forest of group in one transaction:
	// new names are inserted, changed definitions updated, unchanged rows
	// are not touched. The code's cron is compared with the row's CodeCron
	// (what the code registered before), not with the cron in force: an
	// operator's override (Reschedule) holds while the code registers the
	// same cron and time zone, and yields to a different one (cron =
	// CodeCron = def.Cron, next_start_time = def.NextStartTime, override
	// cleared). A pause is never lifted by a registration. A removed row
	// (TaskRemoved) is revived as new, and a registered row's StaleSince is
	// cleared. Parents are given by name and must be in defs or already
	// stored.
	UpsertTasks(ctx context.Context, group string, defs []TaskDef) ([]Task, error)
	// DueTasks lists pending, unpaused root tasks due within q.Window.
	DueTasks(ctx context.Context, q DueQuery) (Due, error)
	// Claim moves each (id, version) still pending at that version to doing
	// for node, version+1, in one statement. Only returned rows are won.
	Claim(ctx context.Context, node NodeID, refs []TaskRef) ([]Task, error)
	// Release puts claims back to pending (version+1, node cleared) where
	// the fence still matches; it returns how many it released.
	Release(ctx context.Context, claims []Claim) (int, error)
	// HeldBy lists the doing tasks claimed by node.
	HeldBy(ctx context.Context, node NodeID) ([]Task, error)
	// Task is TaskReader.Task (a chain child's row, before its claim).
	Task(ctx context.Context, group, name string) (Task, error)
}

// TaskReader reads tasks for the operator's tools.
type TaskReader interface {
	// Task reads one task by name; ErrTaskNotFound if there is none (or
	// it was removed).
	Task(ctx context.Context, group, name string) (Task, error)
	// Tasks lists every task of group ordered by id, removed ones left out.
	Tasks(ctx context.Context, group string) ([]Task, error)
	// Groups lists the groups that have tasks (not removed) or node rows,
	// sorted.
	Groups(ctx context.Context) ([]string, error)
}

// Finish closes one execution and reschedules its task, fenced by Claim.
type Finish struct {
	Claim       Claim
	ExecutionID int64 // 0 when no execution row was written
	// Run, when ExecutionID is 0, is the run to append to the history in
	// the same write: a run that ended before its start was recorded is
	// written once, at its finish. Its ScheduledAt, Attempt, Misfire and
	// ParentExecutionID are used; its status is Status, or ExecFenced when
	// the fence fails. A retried finish (its first reply lost) finds the
	// row by the start key (task, node, fire, attempt) instead of writing
	// a second one, and replaces only a running or abandoned row there.
	Run *Execution
	// Started and Ran are when the job began (the store's clock, as the
	// node estimates it) and how long it ran, measured where it ran: the
	// run's row starts at Started and finishes Ran later (neither later
	// than the store's now), so it says how long the job took, not when
	// its writes happened. With Started zero, an appended row starts at
	// the store's now minus Ran and a recorded one keeps its start.
	Started time.Time
	Ran     time.Duration
	// Status is how the run ended; "" for the start of a run that goes
	// on without its claim (OverlapAllowAll): the row moves on to Next and
	// keeps its last status, error and failures, a run appended is
	// written running (never fenced), and EndRun records its end.
	Status ExecStatus
	Error  string
	// Next is the next fire time and NextAttempt its attempt number.
	Next        time.Time
	NextAttempt int
	// NextKind is the kind of the fire at Next when it is not the cron's
	// own (Task.FireKind): RunBuffered for a fire that came due while this
	// run ran, RunBackfill for the next of a backfill; "" otherwise. A
	// trigger asked for meanwhile wins (manual).
	NextKind RunKind
	// Backfilled marks the finish of a backfill fire: the row's pending
	// backfill fire becomes BackfillNext, the next of the range (zero when
	// the range is done: the backfill ends). Next is then the row's own
	// next fire, unchanged.
	Backfilled   bool
	BackfillNext time.Time
	// CountFire counts this run in the task's fires (Task.Fires): the
	// first attempt of a fire that ran, not a chain step or a backfill.
	CountFire bool
	// Cron is the expression Next was computed from, Revision the
	// revision of the definition the fire ran. When the row's cron or
	// revision differs (rescheduled or edited while the fire ran), the
	// row's own next_start_time wins and the claim is not kept.
	Cron     string
	Revision int64
	// Done marks a cron without a further fire: the task becomes finished.
	Done bool
	// Keep asks to keep the claim for Next (status stays doing, version+1).
	// The store ignores it when the task was paused or triggered meanwhile.
	Keep bool
	// Pause parks the task paused, with an audit entry "pause" by the
	// claimer's node: this run's failure makes the task's failures in a
	// row reach its PauseAfter (the node decides; it holds the row's
	// count). Ignored with Done, or when a trigger asked for an extra fire.
	Pause bool
	// Log is the run's captured log (RunLogWriter): it replaces the
	// log of the run's row, whichever way the row is written; "" leaves
	// the row's (a run that logged nothing, or a start).
	Log string
	// Handoff marks a claim given up for a peer to take (the strategy now
	// gives the task to another node): when the row ends pending, the
	// group's listeners are woken so the new owner claims it at once
	// instead of at its next poll.
	Handoff bool
	// Withdraw marks a fire given back before its job began (no free
	// worker within the start deadline, or its node stopping): the start
	// record ExecutionID names, still open, is deleted rather than
	// closed, and no row is appended (leave Run nil). A fire that did not
	// run is no run: whichever node runs it later, this one included,
	// records that run under the same start key. Status is ExecGoesOn, so
	// the task's last outcome stays as it was. When the fence fails, the
	// record is deleted only if recovery marked it abandoned: a running
	// one was reopened since by the same node's run of that fire.
	Withdraw bool
	// Result is the run's result (easyjob.SetResult, JSON text, at most
	// MaxResultBytes), stored with its execution whichever way the row is
	// written, in the same statement as the finish: a DAG step that the
	// finish makes due always finds it. "" stores none.
	Result string
}

// DueAt is when the row f writes is due: its next fire, or the next fire
// of its backfill when that is earlier (Task.DueAt of the written row).
func (f Finish) DueAt() time.Time {
	if !f.BackfillNext.IsZero() && f.BackfillNext.Before(f.Next) {
		return f.BackfillNext
	}
	return f.Next
}

// ExecStart is one StartExecutions request.
type ExecStart struct {
	Claim     Claim
	Execution Execution
}

// StartResult is the outcome of one ExecStart.
type StartResult struct {
	Execution Execution
	Err       error
}

// FinishResult is the outcome of one Finish: the task row as written, or
// Err = ErrClaimLost when the fence failed (the execution is then closed as
// ExecFenced and the task is not touched).
type FinishResult struct {
	Task Task
	Err  error
}

// RunStore records a node's runs: their starts and finishes, and the
// runs of an interrupted chain.
type RunStore interface {
	// StartExecution inserts a running execution (StartedAt = now) if the
	// claim still holds, else returns ErrClaimLost. A row of the same
	// start key (task, node, fire, attempt) that was not fenced is
	// returned instead (a fenced run keeps its row; the fire run again
	// gets a new one): reopened
	// when it is running or abandoned (a start retried after a lost
	// reply, a fire resumed after recovery), as it is when it ended (the
	// root of a chain resumed on the node that ran it: it stays succeeded).
	StartExecution(ctx context.Context, c Claim, e Execution) (Execution, error)
	// StartExecutions is StartExecution for many claims in one statement:
	// all fires due together start in one round trip. Results are in the
	// order of reqs; a lost fence gives Err wrapping ErrClaimLost. Claims
	// must name distinct tasks.
	StartExecutions(ctx context.Context, reqs []ExecStart) ([]StartResult, error)
	// Finish applies many finishes in one statement, each with its own
	// fence; results are in the order of fs.
	Finish(ctx context.Context, fs []Finish) ([]FinishResult, error)
	// EndRun records the end of a run that went on without its claim (a
	// finish with Status ""), whoever holds the task now: the run's row,
	// found by its start key (task, node, fire, attempt, batch), takes its
	// status, error and times (written whole if its start was not written
	// yet), and the task's last status, error and failures follow it;
	// reaching PauseAfter failures pauses the task (audited, via node).
	EndRun(ctx context.Context, e RunEnd) error
	// ChainRun returns the newest execution of task at scheduled that
	// ended (abandoned: its node died; succeeded: its chain was interrupted
	// by the database or a shutdown), or else the newest running one,
	// followed by every execution recorded under it
	// (parent_execution_id, at any depth), oldest first, each with its
	// TaskName; none when there is no such execution. A node running the
	// fire again resumes the chain from it.
	ChainRun(ctx context.Context, task TaskID, scheduled time.Time) ([]Execution, error)
	// StartBroadcast records the start of one node's run of a fire of a
	// broadcast task (TaskOptions.Broadcast; no claim: every node runs
	// every fire): a running execution of kind cron at the start key
	// (b.Task, b.Node, b.ScheduledAt, attempt 1, batch 0), StartedAt = now,
	// and the row's next_start_time moved to b.Next when that is later,
	// without a version change. It returns ErrBroadcastNotStarted, and
	// writes nothing, when the task is paused, finished or removed, is at
	// another revision than b.Revision, or that row exists already.
	StartBroadcast(ctx context.Context, b BroadcastStart) (Execution, error)
}

// HistoryStore reads and prunes the history.
type HistoryStore interface {
	// History lists executions of a task, newest first.
	History(ctx context.Context, group, name string, f HistoryFilter) ([]Execution, error)
	// PruneHistory deletes finished executions of group older than maxAge
	// (0 = no age bound) and beyond the newest maxRows per task (0 = no
	// row bound), in short batches; it returns how many it deleted. Removed
	// tasks (TaskRemoved) left without executions are deleted too (not
	// counted).
	PruneHistory(ctx context.Context, group string, maxAge time.Duration, maxRows int) (int, error)
}

// UpkeepStore is the group's upkeep that one node does for all (history
// retention, stale tasks).
type UpkeepStore interface {
	// RegisteredTasks lists the tasks of group registered in code (not
	// Dynamic, not removed), ordered by id: what a node's upkeep reads,
	// whatever the number of runtime schedules.
	RegisteredTasks(ctx context.Context, group string) ([]Task, error)
	// MarkStale records which tasks of group no live node registers: those
	// named in stale get StaleSince = now unless already set, the others of
	// the group lose it. A runtime schedule (Dynamic) is never marked. No
	// version changes. It returns the registered tasks of the group, as
	// RegisteredTasks does.
	MarkStale(ctx context.Context, group string, stale []string) ([]Task, error)
	// PruneHistory is HistoryStore.PruneHistory (Config.HistoryMaxAge and
	// HistoryMaxRows).
	PruneHistory(ctx context.Context, group string, maxAge time.Duration, maxRows int) (int, error)
	// RemoveTask is ControlStore.RemoveTask (stale tasks past
	// StaleTaskExpiry).
	RemoveTask(ctx context.Context, group, name string, o Removal) ([]Task, error)
}

// Orphan is a doing task whose claimer is dead or gone.
type Orphan struct {
	Task     Task
	DeadNode NodeID
}

// Recovery resets one orphan.
type Recovery struct {
	Ref      TaskRef
	DeadNode NodeID
	// Next replaces next_start_time when not zero (recovery policy skip);
	// zero keeps it, so the overdue fire runs now.
	Next time.Time
	// Delay is the held fire's jitter (TaskOptions.Jitter): the fire
	// could have started only Delay after its time, so it came due while
	// the dead node heartbeated only if that moment did.
	Delay time.Duration
}

// RecoveryStore finds and resets the tasks of dead nodes.
type RecoveryStore interface {
	// Orphans lists doing tasks of group whose node has not heartbeated
	// within deadAfter or has no row at all.
	Orphans(ctx context.Context, group string, deadAfter time.Duration) ([]Orphan, error)
	// RecoverAll resets orphans to pending, each with a version check, and
	// marks the dead node's running executions of them abandoned, in one
	// statement, so the failover of a node holding hundreds of tasks costs
	// one round trip. A fire that came due while the dead node still
	// heartbeated and has no execution of that node (a short run is only
	// recorded at its finish, see Finish.Run) gets one, abandoned: every
	// fire a dead node may have been running shows in the history.
	// errs[i] is nil or wraps ErrClaimLost for rs[i].
	RecoverAll(ctx context.Context, rs []Recovery) (errs []error, err error)
	// AbandonBroadcasts closes as abandoned (BroadcastAbandoned) the
	// running executions of group's broadcast tasks whose node has not
	// heartbeated within deadAfter or has no row, and returns how many. No
	// version changes; the fires are not run again. A run's own end
	// (EndRun) still replaces the abandoned row if its node comes back.
	AbandonBroadcasts(ctx context.Context, group string, deadAfter time.Duration) (int, error)
}

// ControlStore holds the operator actions; each is version-safe against a
// running fire: none of them fences a claimed fire.
type ControlStore interface {
	// Pause stops future claims. A pending task becomes paused at once; a
	// doing one finishes its current fire, then parks as paused.
	Pause(ctx context.Context, group, name string) (Task, error)
	// Resume clears a pause; a fire that came due meanwhile is subject to
	// the task's misfire policy.
	Resume(ctx context.Context, group, name string) (Task, error)
	// Trigger asks for one fire as soon as possible. On a paused task it
	// runs once and stays paused; on a doing task it runs once more right
	// after the current fire. args, when not "", are the arguments of
	// that fire (JSON text, Task.FireArgs); "" runs it with the schedule's.
	Trigger(ctx context.Context, group, name string, args string) (Task, error)
	// Backfill asks for the fires of a past range to run, one after
	// another: first is the range's first fire, to its end (both in the
	// past). The row keeps its own next fire (Task.BackfillNext); a doing
	// row runs the backfill after its current fire. It fails with
	// ErrBackfillInProgress while an earlier backfill has fires left.
	Backfill(ctx context.Context, group, name string, first, to time.Time) (Task, error)
	// Reschedule sets a new cron and the next fire computed from it. It
	// marks the task overridden (OverriddenAt = now), or clears the
	// override when cron is the code's (CodeCron). next are the new cron's
	// first fires after the store's now (NextFires): a row not claimed
	// takes the first; a claimed one (doing) takes the first after its
	// claimed fire (FireAfter), which still runs once, at its time, so it
	// never runs twice. The store remembers the claimed fire until the
	// row's finish or next claim, so that a second re-timing during the
	// same claim measures from it too. Empty keeps the row's next fire.
	// The new revision is recorded (RevisionStore), by the actor of the
	// audit entry ctx carries.
	Reschedule(ctx context.Context, group, name, cron string, next []time.Time) (Task, error)
	// RemoveTask deletes the task and its descendants (children, their
	// children, ...) and returns the rows removed, the named task first.
	// With o.KeepHistory, rows that have executions stay as TaskRemoved
	// tombstones (version+1, claim cleared) that History still reads;
	// otherwise their executions are deleted with them. With o.StaleBefore
	// set, it removes nothing (and returns no rows) unless the task's
	// StaleSince is set and not after o.StaleBefore. The control operations
	// of every task return ErrTaskNotFound from then on.
	RemoveTask(ctx context.Context, group, name string, o Removal) ([]Task, error)
}

// Removal qualifies a RemoveTask: what is kept, and on what condition.
type Removal struct {
	// KeepHistory keeps the executions of the removed tasks readable by
	// History.
	KeepHistory bool
	// StaleBefore, when not zero, makes the removal conditional on the task
	// having been stale (MarkStale) since this time or earlier: a node that
	// registered it meanwhile cleared StaleSince, so it is kept.
	StaleBefore time.Time
}

// Notifier is implemented by stores that can wake nodes when a task is
// registered, triggered, resumed or released (Postgres LISTEN/NOTIFY).
type Notifier interface {
	// Listen blocks until ctx is done (returning nil) or the connection
	// fails, calling wake for each notification of group.
	Listen(ctx context.Context, group string, wake func()) error
}
