// Package spec holds a registered task as the runtime sees it: what the
// public Register validated, linked into its forest, with the job to
// call. The public API builds specs; the runtime only reads them.
package spec

import (
	"context"
	"database/sql"
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
