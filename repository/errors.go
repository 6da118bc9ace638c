package repository

import "errors"

// Sentinel errors returned by every Store. Wrap them with %w; test with errors.Is.
var (
	// ErrClaimLost means a fenced write matched no row: the task's version or
	// owner changed since the caller claimed it (a peer recovered it, an
	// operator paused it, ...). The caller must back off and not apply results.
	ErrClaimLost = errors.New("easyjob: claim lost")
	// ErrTaskNotFound means no task of that name exists in the group.
	ErrTaskNotFound = errors.New("easyjob: task not found")
	// ErrCalendarNotFound means no calendar of that name exists in the
	// group.
	ErrCalendarNotFound = errors.New("easyjob: calendar not found")
	// ErrNodeNotFound means the node row does not exist (expired or deleted).
	ErrNodeNotFound = errors.New("easyjob: node not found")
	// ErrSchemaTooNew means the database holds a schema version this binary
	// does not know; an older binary must not write to it.
	ErrSchemaTooNew = errors.New("easyjob: database schema is newer than this binary")
	// ErrTaskSetNotFound means no task set was published under that id.
	ErrTaskSetNotFound = errors.New("easyjob: task set not found")
	// ErrBackfillInProgress means the task has a backfill whose fires have
	// not all run: one backfill at a time per task.
	ErrBackfillInProgress = errors.New("easyjob: a backfill is in progress")
	// ErrConflict means a control operation lost a version race repeatedly.
	ErrConflict = errors.New("easyjob: concurrent update, try again")
	// ErrNotRunning means a cancel found no run of the task in progress.
	ErrNotRunning = errors.New("easyjob: task is not running")
	// ErrRunNotFound means the task has no run of that id (never, or
	// pruned by the history retention).
	ErrRunNotFound = errors.New("easyjob: run not found")
	// ErrNotifyUnavailable means a Notifier cannot listen where it is (a
	// transaction pooler keeps no session to LISTEN on): the caller polls.
	ErrNotifyUnavailable = errors.New("easyjob: notifications unavailable behind a transaction pooler")
)
