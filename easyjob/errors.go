package easyjob

import (
	"errors"

	"github.com/easyjob-go/easyjob/repository"
)

// Sentinel errors. Every error easyjob returns wraps one of these (or a
// store error) and names the task or setting at fault.
var (
	ErrInvalidName    = errors.New("easyjob: invalid task name")
	ErrInvalidCron    = errors.New("easyjob: invalid cron expression")
	ErrNilFunc        = errors.New("easyjob: nil job function")
	ErrDuplicateTask  = errors.New("easyjob: duplicate task name")
	ErrUnknownParent  = errors.New("easyjob: unknown parent task")
	ErrCycle          = errors.New("easyjob: parent cycle")
	ErrInvalidOption  = errors.New("easyjob: invalid option")
	ErrInvalidConfig  = errors.New("easyjob: invalid config")
	ErrAlreadyRunning = errors.New("easyjob: scheduler already running")
	ErrNoTasks        = errors.New("easyjob: no tasks registered")

	// ErrTaskNotFound is returned by the control operations for an unknown name.
	ErrTaskNotFound = repository.ErrTaskNotFound
	// ErrClaimLost reports a fenced write: the node no longer owned the task.
	ErrClaimLost = repository.ErrClaimLost
)
