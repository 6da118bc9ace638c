package repository

import (
	"context"
	"time"
)

// RunCancel is an operator's request to cancel the runs of a task in
// progress (easyjob.Client.Cancel).
type RunCancel struct {
	Task string
	At   time.Time // the store's clock when it was asked
	By   string    // who asked (the audit entry's actor name)
}

// CancelReader is how a node learns of cancel requests: it reads them
// while it runs jobs, and cancels the runs of each named task it holds
// that began before the request.
type CancelReader interface {
	// CancelsSince lists the requests of group made after since, oldest
	// first.
	CancelsSince(ctx context.Context, group string, since time.Time) ([]RunCancel, error)
}

// CancelStore records cancel requests.
type CancelStore interface {
	// Cancel asks the node running a fire of task name to cancel its
	// job's context, recording the audit entry ctx carries. ErrNotRunning
	// if no run of the task is in progress; ErrTaskNotFound if there is
	// no such task.
	Cancel(ctx context.Context, group, name string) (Task, error)
}
