package repository

import (
	"cmp"
	"slices"
	"time"
)

// ApplyTaskDef is the rule by which UpsertTasks updates a stored row: it
// returns cur as def registers it (parent resolved to its id), whether
// anything is to be written (write) and whether more than StaleSince
// changed (touch: updated_at = now). Both stores call it, so they cannot
// disagree.
//
//   - The handler is the task's own name: code registers a task under it.
//   - A removed row (a tombstone) is revived as if new: pending (finished
//     when def.Finished), attempt 1, no claim, pause, trigger or override,
//     next_start_time = def.NextStartTime, version+1; a runtime schedule's
//     tombstone becomes a registered task (not Dynamic, no arguments).
//   - The code's schedule is def.Cron with def.Options.Timezone. When it
//     differs from the one the code registered before (CodeCron and the
//     stored time zone), or when the row is not overridden and its cron is
//     not def.Cron, the row takes it: cron = CodeCron = def.Cron,
//     next_start_time = def.NextStartTime, override cleared, a pending or
//     finished row pending (finished when def.Finished). Otherwise the cron
//     in force and next_start_time stay: an operator's override survives
//     every registration of unchanged code.
//   - A pause is never lifted, a claim never touched.
//   - Options and parent are the code's.
//   - Any change but the clearing of StaleSince bumps the version, except
//     on a doing row: a deploy must not fence a running fire.
func ApplyTaskDef(cur Task, def TaskDef, parent TaskID) (u Task, write, touch bool) {
	u = applyTaskDef(cur, def, parent)
	cleared := cur
	cleared.StaleSince = time.Time{}
	return u, u != cur, u != cleared
}

func applyTaskDef(cur Task, def TaskDef, parent TaskID) Task {
	u := cur
	u.Options, u.ParentID, u.Handler = def.Options, parent, def.Name
	u.StaleSince = time.Time{}
	if cur.Status == TaskRemoved {
		u.Dynamic, u.Args, u.FireArgs = false, "", ""
		u.Cron, u.CodeCron, u.OverriddenAt = def.Cron, def.Cron, time.Time{}
		u.NextStartTime = def.NextStartTime
		u.Status = TaskPending
		if def.Finished {
			u.Status = TaskFinished
		}
		u.NodeID, u.Attempt, u.Paused, u.TriggerRequested, u.FireKind = 0, 1, false, false, ""
		u.Version++
		return u
	}
	codeChanged := cur.CodeCron != def.Cron || cur.Options.Timezone != def.Options.Timezone
	reschedule := codeChanged || (!cur.Overridden() && cur.Cron != def.Cron)
	if reschedule {
		u.Cron, u.CodeCron, u.OverriddenAt = def.Cron, def.Cron, time.Time{}
		if !def.NextStartTime.IsZero() {
			u.NextStartTime = def.NextStartTime
			if cur.Status != TaskDoing {
				u.FireKind, u.FireArgs = "", "" // the new cron's fire replaces a triggered one
			}
		}
		if cur.Status == TaskPending || cur.Status == TaskFinished {
			u.Status = TaskPending
			if def.Finished {
				u.Status = TaskFinished
			}
		}
	}
	changed := reschedule || cur.Options != def.Options || cur.ParentID != parent
	if changed && cur.Status != TaskDoing {
		u.Version++
	}
	return u
}

// Subtree returns the task called name among tasks and its descendants,
// the named task first, the others by id: what RemoveTask removes. It
// returns ErrTaskNotFound when tasks has no such name, and no rows when
// staleBefore is set and the task was not stale since then (StaleSince
// zero or after it) or is a runtime schedule (Dynamic: never stale, its
// definition is the store's, not a node's).
func Subtree(tasks []Task, name string, staleBefore time.Time) ([]Task, error) {
	root := -1
	for i, t := range tasks {
		if t.Name == name {
			root = i
		}
	}
	if root < 0 {
		return nil, ErrTaskNotFound
	}
	if !staleBefore.IsZero() && (tasks[root].Dynamic || tasks[root].StaleSince.IsZero() || tasks[root].StaleSince.After(staleBefore)) {
		return nil, nil
	}
	in := map[TaskID]bool{tasks[root].ID: true}
	for grew := true; grew; {
		grew = false
		for _, t := range tasks {
			if !in[t.ID] && t.ParentID != 0 && in[t.ParentID] {
				in[t.ID], grew = true, true
			}
		}
	}
	out := []Task{tasks[root]}
	rest := make([]Task, 0, len(in)-1)
	for _, t := range tasks {
		if in[t.ID] && t.ID != tasks[root].ID {
			rest = append(rest, t)
		}
	}
	slices.SortFunc(rest, func(a, b Task) int { return cmp.Compare(a.ID, b.ID) })
	return append(out, rest...), nil
}
