package repository

import (
	"context"
	"time"
)

// RunLogUpdate is the log so far of a run still going (a job running
// longer than the node's flush interval), found by its start key.
type RunLogUpdate struct {
	Task        TaskID
	Node        NodeID
	ScheduledAt time.Time
	Attempt     int
	Batch       int64
	// Log is the run's whole log so far: it replaces the row's, so a
	// write that is retried or overtaken never doubles a line.
	Log string
}

// RunLogWriter stores the logs of running jobs; a run's final log is
// written by its finish (Finish.Log, RunEnd.Log).
type RunLogWriter interface {
	// WriteRunLogs replaces the log of each running execution found by
	// its start key; an execution not recorded yet, or no longer running,
	// is left alone. It returns how many rows it wrote.
	WriteRunLogs(ctx context.Context, logs []RunLogUpdate) (int, error)
}

// RunLog is one run and the lines its job logged.
type RunLog struct {
	Execution Execution // with TaskName
	Log       string
}

// RunLogReader reads run logs for the operator's tools.
type RunLogReader interface {
	// RunLog reads run id of task name in group, with its log;
	// ErrRunNotFound when the task has no such run, ErrTaskNotFound when
	// there is no such task.
	RunLog(ctx context.Context, group, name string, id int64) (RunLog, error)
}
