package easyjob

import (
	"errors"

	"github.com/easyjob-go/easyjob/easyjob/internal/calendar"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// Sentinel errors. Every error easyjob returns wraps one of these (or a
// store error) and names the task or setting at fault.
var (
	ErrInvalidName = errors.New("easyjob: invalid task name")
	// ErrInvalidCron: a cron expression or time zone that does not parse, or
	// a cron that never fires.
	ErrInvalidCron    = schedule.ErrInvalidCron
	ErrNilFunc        = errors.New("easyjob: nil job function")
	ErrDuplicateTask  = errors.New("easyjob: duplicate task name")
	ErrUnknownParent  = errors.New("easyjob: unknown parent task")
	ErrCycle          = errors.New("easyjob: parent cycle")
	ErrInvalidOption  = errors.New("easyjob: invalid option")
	ErrInvalidConfig  = errors.New("easyjob: invalid config")
	ErrAlreadyRunning = errors.New("easyjob: scheduler already running")
	ErrNoTasks        = errors.New("easyjob: no tasks registered")

	// ErrTaskInUse is returned by Client.Remove for a task that a live
	// node registers, or whose fire a node has claimed: removing it would
	// only last until that node registers it again (and the node would
	// never fire it meanwhile). Remove it once no node runs that code, or
	// force it.
	ErrTaskInUse = errors.New("easyjob: task in use")

	// ErrNotTriggerable is returned by Client.Trigger for a task no node
	// would run: a chain step (trigger its root), or a task no live node
	// registers.
	ErrNotTriggerable = errors.New("easyjob: task cannot be triggered")

	// ErrUnknownHandler is returned by Client.Create and Update for a
	// handler kind that no live node registers (Handle): nothing would run
	// the schedule. AllowUnknownHandler accepts it; it waits until a node
	// with that handler starts.
	ErrUnknownHandler = errors.New("easyjob: unknown handler kind")
	// ErrInvalidArgs is returned for arguments that are not JSON or do not
	// decode into the handler's argument type; the message names the field.
	ErrInvalidArgs = errors.New("easyjob: invalid arguments")
	// ErrTaskExists is returned by Client.Create for a name already taken
	// in the group (by a task registered in code or another schedule).
	ErrTaskExists = repository.ErrTaskExists
	// ErrNotDynamic is returned by Client.Update for a task registered in
	// code: its definition belongs to the code (use Reschedule for its cron).
	ErrNotDynamic = repository.ErrNotDynamic

	// ErrTaskNotFound is returned by the control operations for an unknown name.
	ErrTaskNotFound = repository.ErrTaskNotFound
	// ErrInvalidCalendar is returned by Client.SetCalendar for a calendar
	// that does not parse (a date, a range, a cron, a time zone); the
	// message names the rule.
	ErrInvalidCalendar = calendar.ErrInvalid
	// ErrCalendarNotFound is returned for a calendar name the group does
	// not have (Client.RemoveCalendar, a schedule naming it).
	ErrCalendarNotFound = repository.ErrCalendarNotFound
	// ErrInvalidBackfill is returned by Client.Backfill for a range that
	// is empty, in the future or too long, or a task that cannot be
	// backfilled (a chain step, a finished task).
	ErrInvalidBackfill = errors.New("easyjob: invalid backfill")
	// ErrBackfillInProgress is returned by Client.Backfill while an
	// earlier backfill of the task has fires left.
	ErrBackfillInProgress = repository.ErrBackfillInProgress
	// ErrNotRunning is returned by Client.Cancel for a task with no run
	// in progress.
	ErrNotRunning = repository.ErrNotRunning
	// ErrRunNotFound is returned by Client.RunLog for a run the task does
	// not have (never, or pruned by the history retention).
	ErrRunNotFound = repository.ErrRunNotFound
	// ErrClaimLost reports a fenced write: the node no longer owned the task.
	ErrClaimLost = repository.ErrClaimLost
)
