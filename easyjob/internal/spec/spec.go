// Package spec holds a registered task as the runtime sees it: what the
// public Register validated, linked into its forest, with the job to
// call. The public API builds specs; the runtime only reads them.
package spec

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/runlog"
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
	// Handler marks a handler kind (easyjob.Handle): it has no row of its
	// own; the schedules created at runtime that name it (Task.Handler)
	// run its Job with their own cron, options and arguments (ForRow).
	Handler bool
	// ArgsSchema is the JSON schema of a handler's arguments, published
	// for the tools that check a schedule's arguments before writing it.
	ArgsSchema string
	// Scheds parses the crons of a handler's rows (ForRow), once per
	// expression and zone; nil parses every time.
	Scheds *schedule.Cache

	Children []*Spec // registration order
	// Steps are the DAG steps that name this task among their parents
	// (TaskOptions.Parents), by name: a finish of this task may make
	// them due.
	Steps []string
}

// IsStep reports whether s is a DAG step: it runs after its parents
// (TaskOptions.Parents), not on a cron of its own.
func (s *Spec) IsStep() bool { return s.Opts.Parents != "" }

// HasStep reports whether a task named name is a step of s's chain (a
// descendant of s).
func (s *Spec) HasStep(name string) bool {
	for _, c := range s.Children {
		if c.Name == name || c.HasStep(name) {
			return true
		}
	}
	return false
}

// ForRow returns the spec a claim of row t runs: s itself for a task
// registered in code; for a schedule created at runtime (t.Dynamic), a
// copy of its handler s under the row's name, cron and options. An error
// says the row's cron does not parse here (a time zone this host lacks):
// its schedule is then empty, so the fire runs once and the task ends.
func (s *Spec) ForRow(t *repository.Task) (*Spec, error) {
	if s == nil || !t.Dynamic {
		return s, nil
	}
	r := *s
	r.Name, r.Cron, r.Parent, r.Opts, r.Children = t.Name, t.Cron, "", t.Options, nil
	parse := schedule.Parse
	if s.Scheds != nil {
		parse = s.Scheds.Parse
	}
	var err error
	if r.Sched, err = parse(t.Cron, t.Options.Timezone); err != nil {
		err = fmt.Errorf("schedule %q: cron %q: %w", t.Name, t.Cron, err)
	}
	return &r, err
}

// ScheduleOf returns the schedule of row t: the registered one, or the
// row's own when an operator rescheduled the task; an @every task anchored
// at its creation (EveryFromCreation) gets its row's grid, and a task with
// a window (Start, End) its bounds. A stored cron
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
	if s.Opts.EveryFromCreation || !s.Opts.Start.IsZero() || !s.Opts.End.IsZero() || s.Opts.Spread > 0 {
		bounded := sched.ForTask(s.Name, s.Opts, t.CreatedAt)
		sched = &bounded
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
	// Args are the run's JSON arguments (repository.Task.RunArgs); nil
	// when it has none.
	Args []byte
	// Log is the run's captured log (easyjob.Logger); nil when the node
	// keeps none.
	Log *runlog.Log
	// Result receives the run's result (easyjob.SetResult) when a step
	// follows the task; nil otherwise.
	Result *[]byte
	// Shard and Shards are the run's shard of a sharded task
	// (TaskOptions.ShardOf); 0 and 0 for any other run.
	Shard, Shards int
	// ParentResults reads the results of the parent runs a DAG step's run
	// follows; nil for any other run.
	ParentResults func(ctx context.Context) (map[string]string, error)
}
