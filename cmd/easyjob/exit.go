package main

import (
	"errors"
	"fmt"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/alert"
)

// Exit statuses of the operator commands; scripts may rely on them.
const (
	exitOK       = 0 // done
	exitFailed   = 1 // the operation failed (database unreachable, not migrated, ...)
	exitUsage    = 2 // bad flags or arguments
	exitNotFound = 3 // unknown task (or run: logs)
	exitInvalid  = 4 // invalid input (a cron expression, a schedule's arguments or handler kind)
	exitInUse    = 5 // remove refused: a live node registers the task
	exitRefused  = 6 // refused: trigger or backfill of a task no node would run (a chain step, or no live node registers it); update of a task registered in code; a backfill while one is in progress; a cancel of a task not running
	exitExists   = 7 // create refused: the name is taken in the group
)

// usageError is wrong input on the command line: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func (e usageError) Unwrap() error { return e.err }

// usagef formats a usageError like fmt.Errorf (%w wraps).
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// exitCode maps an error to the documented exit statuses.
func exitCode(err error) int {
	var u usageError
	var inUse inUseError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &u):
		return exitUsage
	case errors.As(err, &inUse):
		return exitInUse
	case errors.Is(err, easyjob.ErrTaskNotFound), errors.Is(err, easyjob.ErrCalendarNotFound), errors.Is(err, alert.ErrRuleNotFound), errors.Is(err, easyjob.ErrRunNotFound):
		return exitNotFound
	case errors.Is(err, easyjob.ErrNotTriggerable), errors.Is(err, easyjob.ErrNotDynamic), errors.Is(err, easyjob.ErrBackfillInProgress),
		errors.Is(err, easyjob.ErrNotRunning):
		return exitRefused
	case errors.Is(err, easyjob.ErrTaskExists):
		return exitExists
	case errors.Is(err, easyjob.ErrInvalidCron), errors.Is(err, easyjob.ErrInvalidArgs),
		errors.Is(err, easyjob.ErrUnknownHandler), errors.Is(err, easyjob.ErrInvalidName),
		errors.Is(err, easyjob.ErrInvalidCalendar), errors.Is(err, easyjob.ErrInvalidBackfill),
		errors.Is(err, alert.ErrInvalidRule):
		return exitInvalid
	case errors.Is(err, easyjob.ErrInvalidConfig), errors.Is(err, easyjob.ErrInvalidOption):
		return exitUsage
	}
	return exitFailed
}
