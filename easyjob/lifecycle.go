package easyjob

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// RemoveOptions qualify Client.Remove.
type RemoveOptions struct {
	// Force removes the task even while a live node registers it or a fire
	// of it is claimed (the fire is fenced: its result is not applied).
	Force bool
	// DropHistory deletes the task's runs with it. By default they are
	// kept: History still reads them, until the history retention
	// (Config.HistoryMaxAge, HistoryMaxRows, PruneHistory) deletes them.
	DropHistory bool
}

// describe says what a removal of n tasks does, for the audit log.
func (o RemoveOptions) describe(n int) string {
	d := fmt.Sprintf("%d task(s)", n)
	if o.Force {
		d += ", forced"
	}
	if o.DropHistory {
		d += ", history dropped"
	} else {
		d += ", history kept"
	}
	return d
}

// Remove deletes a task from the group, with its children (a child
// cannot outlive its parent). It is meant for stale tasks (TaskInfo.
// Stale: no live node registers them, typically after their code was
// deleted); for any other it returns an error wrapping ErrTaskInUse unless
// o.Force. A node that registers the name later creates it anew (with the
// kept history). A schedule created at runtime (Client.Create) is removed
// at once: a fire of it already claimed is fenced. It returns the tasks
// removed, the named one first.
func (c *Client) Remove(ctx context.Context, name string, o RemoveOptions) ([]TaskInfo, error) {
	// The task's chain, not the group: a group may hold a million runtime
	// schedules.
	ts, err := c.chain(ctx, name)
	if err != nil {
		return nil, c.wrap("remove", name, err)
	}
	sub, err := repository.Subtree(ts, name, time.Time{})
	if err != nil {
		return nil, c.wrap("remove", name, err)
	}
	// A schedule created at runtime is data, not code: it goes at once (a
	// fire of it already claimed is fenced, as with Force).
	if !o.Force && !sub[0].Dynamic {
		if err := c.checkUnused(ctx, sub); err != nil {
			return nil, fmt.Errorf("easyjob: remove %q: %w", name, err)
		}
	}
	removed, err := c.store.RemoveTask(c.audited(ctx, "remove", name, o.describe(len(sub))), c.group, name,
		repository.Removal{KeepHistory: !o.DropHistory})
	if err != nil {
		return nil, c.wrap("remove", name, err)
	}
	return taskInfos(removed, ts), nil
}

// taskInfos converts rows, naming their parents from all.
func taskInfos(rows, all []repository.Task) []TaskInfo {
	names := make(map[repository.TaskID]string, len(all))
	for _, t := range all {
		names[t.ID] = t.Name
	}
	out := make([]TaskInfo, len(rows))
	for i, t := range rows {
		out[i] = TaskInfoOf(t, names[t.ParentID])
	}
	return out
}

// checkUnused returns an error wrapping ErrTaskInUse when a live node
// registers one of tasks or holds a claim on it.
func (c *Client) checkUnused(ctx context.Context, tasks []repository.Task) error {
	for _, t := range tasks {
		if t.Status == repository.TaskDoing {
			return fmt.Errorf("%w: a fire of %q is claimed by node %d (force to fence it)", ErrTaskInUse, t.Name, t.NodeID)
		}
	}
	live, err := repository.LiveTaskSets(ctx, c.store, c.group, c.live)
	if err != nil {
		return err
	}
	var users []string
	for _, n := range live {
		for _, t := range tasks {
			if n.Registers(t.Name) {
				users = append(users, fmt.Sprintf("%d (%s)", n.Node.ID, n.Node.Name))
				break
			}
		}
	}
	if len(users) > 0 {
		return fmt.Errorf("%w: live node(s) %s register it (stop them or deploy code without it first, or force)",
			ErrTaskInUse, strings.Join(users, ", "))
	}
	return nil
}

// markStale sets Stale on infos.
func (c *Client) markStale(ctx context.Context, infos []TaskInfo) error {
	stale, err := repository.StaleTest(ctx, c.store, c.group, c.live, nil)
	if err != nil {
		return err
	}
	for i := range infos {
		if infos[i].Dynamic {
			// Data, not code: never stale, but it waits while no live node
			// has its handler.
			infos[i].Waiting = stale(infos[i].Handler)
			continue
		}
		infos[i].Stale = stale(infos[i].Name)
	}
	return nil
}

// ResetSchedule ends an operator's override of the task's cron
// (Reschedule): the task takes the cron its code registers again, next
// firing at that cron's first fire after the store's now. A task that is
// not overridden is returned unchanged.
func (c *Client) ResetSchedule(ctx context.Context, name string) (TaskInfo, error) {
	t, err := c.store.Task(ctx, c.group, name)
	if err != nil {
		return TaskInfo{}, c.wrap("reset the schedule of", name, err)
	}
	if !t.Overridden() {
		return c.info(ctx, t)
	}
	return c.reschedule(ctx, "reset", name, t.CodeCron)
}
