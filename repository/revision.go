package repository

import (
	"context"
	"time"
)

// Revision is one definition a task took (its versioned history): what
// a schedule created at runtime was created with (revision 1), and each
// edit after it (UpdateSchedule, Reschedule), with who made it and when.
// A run records the revision it ran (Execution.Revision).
type Revision struct {
	// Revision is the task's Revision once this definition was written.
	Revision int64
	Handler  string
	Cron     string
	Args     string // JSON text; "": none
	Options  TaskOptions
	// Actor is who made the change: the audit entry its context carried
	// (WithAudit); empty when it carried none.
	Actor Actor
	// ChangedAt is when the change was written (the store's clock).
	ChangedAt time.Time
}

// RevisionStore reads the versioned definitions of the tasks.
//
// The stores write a revision in the same statement or transaction as
// the change that makes it, with the actor of the audit entry the
// context carries:
//
//   - CreateSchedules: revision 1 of each created schedule;
//   - UpdateSchedule: the new definition (revision+1);
//   - Reschedule: the new cron (revision+1), of a registered task too
//     (its code's definition, never an edit, is not recorded, so its
//     first revision listed is its first reschedule's).
//
// A registration (UpsertTasks) records none. Revisions go with their
// task row: a removal that keeps the history (a tombstone) keeps them,
// one that deletes the row (or a prune of the tombstone) deletes them. A
// tombstone revived (CreateSchedules, UpsertTasks) is a new task under
// the old id: its old revisions are deleted with the revival, and a
// revived schedule starts again at revision 1. The old runs keep the
// revision numbers they recorded.
type RevisionStore interface {
	// Revisions lists the definitions task name of group took, newest
	// first (by revision); a removed task's (a tombstone's) too.
	// ErrTaskNotFound when no row has the name.
	Revisions(ctx context.Context, group, name string) ([]Revision, error)
}
