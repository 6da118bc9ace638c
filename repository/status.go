package repository

import "fmt"

// TaskStatus is the life-cycle state of a task row.
type TaskStatus string

// Task statuses; see DESIGN.md section 2.
const (
	// TaskPending waits for next_start_time and is claimable when due.
	TaskPending TaskStatus = "pending"
	// TaskDoing is claimed by NodeID for the fire at NextStartTime.
	TaskDoing TaskStatus = "doing"
	// TaskPaused is never claimed until resumed.
	TaskPaused TaskStatus = "paused"
	// TaskFinished has no further fire time.
	TaskFinished TaskStatus = "finished"
	// TaskRemoved is a task removed by an operator with its history kept:
	// a tombstone that only History reads. Task, Tasks and the control
	// operations do not see it; registering the name again revives it.
	TaskRemoved TaskStatus = "removed"
)

// String implements fmt.Stringer.
func (s TaskStatus) String() string { return string(s) }

// Valid reports whether s is one of the known statuses.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskPending, TaskDoing, TaskPaused, TaskFinished, TaskRemoved:
		return true
	}
	return false
}

// ExecStatus is the outcome of one execution (one fire of one task).
type ExecStatus string

// Execution statuses.
const (
	ExecRunning   ExecStatus = "running"
	ExecSucceeded ExecStatus = "succeeded"
	ExecFailed    ExecStatus = "failed"
	ExecTimedOut  ExecStatus = "timed_out"
	// ExecAbandoned: its node died and a peer recovered the task.
	ExecAbandoned ExecStatus = "abandoned"
	// ExecFenced: it finished after its node had lost the claim; the result
	// was recorded but not applied to the task.
	ExecFenced ExecStatus = "fenced"
	// ExecSkipped: the fire was not run (misfire policy skip, failed parent).
	ExecSkipped ExecStatus = "skipped"
	// ExecCancelled: its job's context was cancelled before it ended (the
	// task's overlap policy cancel or terminate: the next fire came due;
	// an operator's cancel).
	ExecCancelled ExecStatus = "cancelled"
	// ExecGoesOn is no row's status: it is the Status of the finish that
	// starts a run going on without its claim (OverlapAllowAll), whose end
	// RunStore.EndRun records.
	ExecGoesOn ExecStatus = ""
)

// String implements fmt.Stringer.
func (s ExecStatus) String() string { return string(s) }

// Final reports whether the status closes an execution.
func (s ExecStatus) Final() bool { return s != ExecRunning && s != "" }

// ParseExecStatus parses the string form of an ExecStatus.
func ParseExecStatus(s string) (ExecStatus, error) {
	switch e := ExecStatus(s); e {
	case ExecRunning, ExecSucceeded, ExecFailed, ExecTimedOut, ExecAbandoned, ExecFenced, ExecSkipped, ExecCancelled:
		return e, nil
	}
	return "", fmt.Errorf("easyjob: unknown execution status %q", s)
}
