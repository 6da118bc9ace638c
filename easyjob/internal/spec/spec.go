// Package spec holds a registered task as the runtime sees it: what the
// public Register validated, linked into its forest, with the job to
// call. The public API builds specs; the runtime only reads them.
package spec

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// Spec is one registered task. It is immutable once the runtime starts,
// but for Sched's shared tick memo (schedule.ShareTicks).
type Spec struct {
	Name   string
	Cron   string // as registered; a row's own cron (rescheduled) wins
	Parent string // "" for a root
	Job    Job
	Opts   repository.TaskOptions
	Sched  schedule.Schedule
	// Fingerprint says which code registered the task (the service's
	// module and the job function): nodes that register one name with
	// different fingerprints collide (repository.Collisions).
	Fingerprint string
	// InTx runs the job in the transaction that records its finish
	// (repository.TxFinisher; a root without children only).
	InTx bool

	Children []*Spec // registration order
}

// ScheduleOf returns the schedule of row t: the registered one, or the
// row's own when an operator rescheduled the task; an @every task anchored
// at its creation (EveryFromCreation) gets its row's grid. A stored cron
// that does not parse (written by another version) yields the registered
// schedule and the error, so the task keeps firing.
func (s *Spec) ScheduleOf(t *repository.Task) (*schedule.Schedule, error) {
	sched, err := &s.Sched, error(nil)
	if t.Cron != s.Cron {
		own, perr := schedule.Parse(t.Cron, s.Opts.Timezone)
		if perr == nil {
			sched = &own
		} else {
			err = fmt.Errorf("task %q: stored cron %q: %w; using the registered %q", s.Name, t.Cron, perr, s.Cron)
		}
	}
	if s.Opts.EveryFromCreation {
		anchored := sched.AnchoredAt(t.CreatedAt)
		sched = &anchored
	}
	return sched, err
}

// Job runs one fire. The public API adapts the user's function to it
// (the run's metadata in the context, panics turned into errors).
type Job func(ctx context.Context, r Run) error

// Run describes the fire a Job runs.
type Run struct {
	Task        string
	TaskID      int64
	ScheduledAt time.Time
	Attempt     int
	NodeID      int64
	Version     int64 // with TaskID, the fencing token
	// Tx is the run's transaction (Spec.InTx), nil otherwise.
	Tx *sql.Tx
}
