package easyjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// ErrTaskInUse is returned by Client.Remove for a task that a live node
// registers, or whose fire a node has claimed: removing it would only
// last until that node registers it again (and the node would never fire
// it meanwhile). Remove it once no node runs that code, or force it.
var ErrTaskInUse = errors.New("easyjob: task in use")

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

// Remove deletes a task from the group, with its children (a child
// cannot outlive its parent). It is meant for stale tasks (TaskInfo.
// Stale: no live node registers them, typically after their code was
// deleted); for any other it returns an error wrapping ErrTaskInUse unless
// o.Force. A node that registers the name later creates it anew (with the
// kept history). It returns the tasks removed, the named one first.
func (c *Client) Remove(ctx context.Context, name string, o RemoveOptions) ([]TaskInfo, error) {
	ts, err := c.store.Tasks(ctx, c.group)
	if err != nil {
		return nil, c.wrap("remove", name, err)
	}
	sub, err := repository.Subtree(ts, name, time.Time{})
	if err != nil {
		return nil, c.wrap("remove", name, err)
	}
	if !o.Force {
		if err := c.checkUnused(ctx, sub); err != nil {
			return nil, fmt.Errorf("easyjob: remove %q: %w", name, err)
		}
	}
	removed, err := c.store.RemoveTask(ctx, c.group, name, repository.RemoveOptions{KeepHistory: !o.DropHistory})
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
		out[i] = taskInfo(t, names[t.ParentID])
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
	live, err := liveTaskSets(ctx, c.store, c.group, c.live)
	if err != nil {
		return err
	}
	var users []string
	for _, n := range live {
		for _, t := range tasks {
			if n.registers(t.Name) {
				users = append(users, fmt.Sprintf("%d (%s)", n.node.ID, n.node.Name))
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

// nodeTasks is a live node with the names it registered.
type nodeTasks struct {
	node repository.Node
	// names registered; nil when the node published no set (or one the
	// store does not hold): it then counts as registering every task.
	names map[string]bool
}

func (n nodeTasks) registers(name string) bool { return n.names == nil || n.names[name] }

// liveTaskSets lists the live nodes of group with their task sets.
func liveTaskSets(ctx context.Context, store repository.Store, group string, liveAfter time.Duration) ([]nodeTasks, error) {
	live, err := store.LiveNodes(ctx, group, liveAfter)
	if err != nil {
		return nil, err
	}
	sets := map[string]map[string]bool{}
	out := make([]nodeTasks, len(live))
	for i, n := range live {
		out[i].node = n
		if n.TaskSet == "" {
			continue
		}
		set, ok := sets[n.TaskSet]
		if !ok {
			names, err := store.TaskSet(ctx, n.TaskSet)
			if err != nil && !errors.Is(err, repository.ErrTaskSetNotFound) {
				return nil, err
			}
			if err == nil {
				set = make(map[string]bool, len(names))
				for _, name := range names {
					set[name] = true
				}
			}
			sets[n.TaskSet] = set
		}
		out[i].names = set
	}
	return out, nil
}

// staleSet returns the test "no live node of the group registers this
// name". extra names count as registered (a node's own, before its row
// carries them).
func staleSet(ctx context.Context, store repository.Store, group string, liveAfter time.Duration, extra []string) (func(string) bool, error) {
	live, err := liveTaskSets(ctx, store, group, liveAfter)
	if err != nil {
		return nil, err
	}
	return func(name string) bool {
		if slices.Contains(extra, name) {
			return false
		}
		for _, n := range live {
			if n.registers(name) {
				return false
			}
		}
		return true
	}, nil
}

// markStale sets Stale on infos.
func (c *Client) markStale(ctx context.Context, infos []TaskInfo) error {
	stale, err := staleSet(ctx, c.store, c.group, c.live, nil)
	if err != nil {
		return err
	}
	for i := range infos {
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
	return c.Reschedule(ctx, name, t.CodeCron)
}
