package repository

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrTaskExists means a name is already taken in the group, by a
// registered task or another schedule.
var ErrTaskExists = errors.New("easyjob: task already exists")

// ErrNotDynamic means an edit meant for a schedule created at runtime
// named a task registered in code (whose definition the code owns).
var ErrNotDynamic = errors.New("easyjob: not a runtime schedule")

// ScheduleDef is the definition of a schedule created at runtime: a
// handler kind registered in code, fired on a cron with JSON arguments.
type ScheduleDef struct {
	Name    string
	Handler string
	Cron    string
	Args    string // JSON text; "": none
	Options TaskOptions
	Paused  bool
	// NextStartTime is the first fire, computed by the caller from the
	// store clock; Finished marks a cron with no fire at all.
	NextStartTime time.Time
	Finished      bool
	// NextFires (UpdateSchedule) are the new cron's first fires after the
	// store's now, as Reschedule's next; empty keeps the row's next fire.
	NextFires []time.Time
}

// NextFires returns the fires of next (a schedule's Next) after now,
// ascending: at most limit of them, none further than horizon from now.
// An operator's re-timing of a row (Reschedule, UpdateSchedule) sends
// them: see Reschedule.
func NextFires(next func(time.Time) (time.Time, bool), now time.Time, limit int, horizon time.Duration) []time.Time {
	var out []time.Time
	for t := now; len(out) < limit; {
		n, ok := next(t)
		if !ok || (len(out) > 0 && n.Sub(now) > horizon) {
			break
		}
		out = append(out, n)
		t = n
	}
	return out
}

// UpdateFires are the fires an UpdateSchedule re-times the row with:
// def.NextFires, or def.NextStartTime alone.
func (def ScheduleDef) UpdateFires() []time.Time {
	if len(def.NextFires) > 0 || def.NextStartTime.IsZero() {
		return def.NextFires
	}
	return []time.Time{def.NextStartTime}
}

// FireAfter is the next fire of a row re-timed while a fire of it is
// claimed: the first of fires (the new cron's, NextFires) after the
// claimed one. With none after it (a claim further ahead than the fires
// reach), claimed itself.
func FireAfter(fires []time.Time, claimed time.Time) time.Time {
	for _, f := range fires {
		if f.After(claimed) {
			return f
		}
	}
	return claimed
}

// HandlerDef is a handler kind a node runs (easyjob.Handle), with the JSON
// schema of its arguments (argschema), so that a tool that lacks the code
// can check a schedule's arguments before writing it.
type HandlerDef struct {
	Kind   string
	Schema json.RawMessage
}

// ScheduleStore creates and edits the schedules made at runtime. Each
// call is one transaction, and records the audit entry its context
// carries (WithAudit) for every row it writes, and the definition each
// row takes (RevisionStore), by that entry's actor.
type ScheduleStore interface {
	// CreateSchedules inserts defs as pending (or paused, or finished) root
	// rows of group, Dynamic, Handler as given, revision 1, and wakes the
	// group. All or nothing: a name already taken (a removed row excepted,
	// which is revived) fails the whole call with ErrTaskExists naming it.
	CreateSchedules(ctx context.Context, group string, defs []ScheduleDef) ([]Task, error)
	// UpdateSchedule replaces the handler, cron, arguments and options of
	// the runtime schedule name (ErrNotDynamic for a registered task) and
	// sets its next fire to def.NextStartTime, revision+1. Like Reschedule
	// it never fences a running fire: a pending row takes version+1, a
	// doing one keeps its version and its finish, which ran the older
	// revision, leaves the new next fire in place. A finished row becomes
	// pending; the paused flag is kept (def.Paused is ignored).
	UpdateSchedule(ctx context.Context, group, name string, def ScheduleDef) (Task, error)
}

// HandlerStore keeps the handler kinds the nodes of a group run.
type HandlerStore interface {
	// PublishHandlers upserts hs for group (by kind: the newest schema
	// wins).
	PublishHandlers(ctx context.Context, group string, hs []HandlerDef) error
	// Handlers lists the kinds published for group, sorted.
	Handlers(ctx context.Context, group string) ([]HandlerDef, error)
}

// CheckArgs refuses arguments (what names their owner) that are not JSON
// text; "" (none) passes.
func CheckArgs(what, args string) error {
	if args != "" && !json.Valid([]byte(args)) {
		return fmt.Errorf("easyjob: %s: arguments are not JSON: %q", what, args)
	}
	return nil
}

// CheckScheduleDefs is what both stores check of a CreateSchedules before
// anything is written: distinct names and JSON arguments.
func CheckScheduleDefs(group string, defs []ScheduleDef) error {
	seen := make(map[string]bool, len(defs))
	for _, d := range defs {
		if seen[d.Name] {
			return fmt.Errorf("easyjob: create schedules in group %q: schedule %q given twice", group, d.Name)
		}
		seen[d.Name] = true
		if err := CheckArgs(fmt.Sprintf("schedule %q in group %q", d.Name, group), d.Args); err != nil {
			return err
		}
	}
	return nil
}
