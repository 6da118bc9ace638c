package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// statusFlags is the setup of status, tasks and nodes: they show the
// nodes, the tasks or both; the tasks a page at a time (--limit, --after,
// --search), so that a group of a million runtime schedules answers at
// once.
func statusFlags(withNodes, withTasks bool) func(*flag.FlagSet) action {
	return func(fs *flag.FlagSet) action {
		var page taskPaging
		if withTasks {
			fs.IntVar(&page.limit, "limit", 1000, "list at most this many tasks, by name (0: every task, read a page of 1000 at a time)")
			fs.StringVar(&page.q.After, "after", "", "list the tasks whose names sort after this one (the next page)")
			fs.StringVar(&page.q.Search, "search", "", "list the tasks whose names contain this, ignoring case")
		}
		return func(ctx context.Context, e *env, _ []string) error {
			return showStatus(ctx, e, withNodes, withTasks, page)
		}
	}
}

// taskPaging is the page of tasks status and tasks list.
type taskPaging struct {
	q     easyjob.TaskQuery
	limit int
}

// listPageSize is the page --limit 0 reads at a time.
const listPageSize = 1000

// read lists the tasks of the page, and the page after it ("" when the
// tasks are all listed).
func (p taskPaging) read(ctx context.Context, c *easyjob.Client) (tasks []easyjob.TaskInfo, next string, err error) {
	q := p.q
	for {
		q.Limit = listPageSize
		if p.limit > 0 {
			q.Limit = min(p.limit-len(tasks), listPageSize)
		}
		l, err := c.ListTasks(ctx, q)
		if err != nil {
			return nil, "", err
		}
		tasks = append(tasks, l.Tasks...)
		if l.Next == "" || (p.limit > 0 && len(tasks) >= p.limit) {
			return tasks, l.Next, nil
		}
		q.After = l.Next
	}
}

// showStatus prints the nodes and/or the tasks of the group.
func showStatus(ctx context.Context, e *env, withNodes, withTasks bool, page taskPaging) error {
	now, err := e.client.Now(ctx)
	if err != nil {
		return err
	}
	var nodes []easyjob.NodeInfo
	var tasks []easyjob.TaskInfo
	var next string
	if withNodes {
		if nodes, err = e.client.Nodes(ctx); err != nil {
			return err
		}
	}
	if withTasks {
		if tasks, next, err = page.read(ctx, e.client); err != nil {
			return err
		}
		if next != "" && e.notes != nil { // apart from the output, which stays a table or JSON
			defer fmt.Fprintf(e.notes, "more tasks follow: --after %s for the next page, --limit 0 for every task\n", next)
		}
	}
	if e.json {
		switch {
		case withNodes && withTasks:
			return e.emit(struct {
				Group string             `json:"group"`
				Now   time.Time          `json:"now"`
				Nodes []easyjob.NodeInfo `json:"nodes"`
				Tasks []easyjob.TaskInfo `json:"tasks"`
			}{e.group, now, nonNil(nodes), nonNil(tasks)})
		case withNodes:
			return e.emit(nonNil(nodes))
		default:
			return e.emit(nonNil(tasks))
		}
	}
	if withNodes && withTasks {
		live := 0
		for _, n := range nodes {
			if n.Live {
				live++
			}
		}
		fmt.Fprintf(e.out, "group %s: %d node(s), %d live; %d task(s); database time %s\n\n",
			e.group, len(nodes), live, len(tasks), now.Format(time.RFC3339))
	}
	if withNodes {
		if withTasks {
			fmt.Fprintln(e.out, "NODES")
		}
		printNodes(e.out, nodes, now, e.group)
	}
	if withNodes && withTasks {
		fmt.Fprintln(e.out, "\nTASKS")
	}
	if withTasks {
		printTasks(e.out, tasks, now, e.group)
	}
	if len(nodes) == 0 && len(tasks) == 0 {
		return e.printGroups(ctx)
	}
	return nil
}

// printGroups names the groups that exist, for a group found empty (a
// typo, or a service with a Config.Group of its own).
func (e *env) printGroups(ctx context.Context) error {
	groups, err := e.store.Groups(ctx)
	if err != nil {
		return err
	}
	if len(groups) == 0 {
		_, err = fmt.Fprintln(e.out, "no group has tasks or nodes in this database yet: a node registers its tasks when it starts")
		return err
	}
	_, err = fmt.Fprintf(e.out, "groups in this database: %s (choose one with --group NAME)\n", strings.Join(groups, ", "))
	return err
}

// nonNil makes a nil slice an empty one (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// printNodes writes the nodes table.
func printNodes(out io.Writer, nodes []easyjob.NodeInfo, now time.Time, group string) {
	if len(nodes) == 0 {
		fmt.Fprintf(out, "no nodes in group %q\n", group)
		return
	}
	t := newTable(out, "ID", "NAME", "STATE", "ROW", "HEARTBEAT", "STARTED", "WEIGHT", "RUNS", "IN-FLIGHT")
	for _, n := range nodes {
		state := "suspect"
		switch {
		case n.Live:
			state = "live"
		case n.Dead:
			state = "dead"
		}
		row := "-"
		if n.RowNumber > 0 {
			row = strconv.Itoa(n.RowNumber)
		}
		t.row(strconv.FormatInt(n.ID, 10), n.Name, state, row, shortDuration(n.HeartbeatAge)+" ago", relTime(n.StartedAt, now),
			strconv.Itoa(n.Weight), strconv.FormatInt(n.Counts, 10), strconv.Itoa(n.InFlight))
	}
	t.flush()
}

// printTasks writes the tasks table.
func printTasks(out io.Writer, tasks []easyjob.TaskInfo, now time.Time, group string) {
	if len(tasks) == 0 {
		fmt.Fprintf(out, "no tasks in group %q\n", group)
		return
	}
	// HANDLER only when the group has schedules created at runtime (a task
	// registered in code is its own handler: "-").
	dynamic := 0
	for _, x := range tasks {
		if x.Dynamic {
			dynamic++
		}
	}
	header := []string{"ID", "NAME", "PARENT", "CRON", "STATUS", "NEXT", "NODE", "LAST", "FINISHED", "ERROR"}
	if dynamic > 0 {
		header = slices.Insert(header, 2, "HANDLER")
	}
	t := newTable(out, header...)
	overridden, stale, waiting := 0, 0, 0
	for _, x := range tasks {
		cron := orAfterParent(x.Cron)
		if x.Timezone != "" {
			cron += " " + x.Timezone
		}
		if x.Overridden {
			cron += " (override; code: " + orAfterParent(x.CodeCron) + ")"
			overridden++
		}
		if x.Broadcast {
			cron += " (broadcast)"
		}
		if x.Daemon {
			cron = "(daemon)"
		}
		status := string(x.Status)
		if x.Stale {
			status += " (stale)"
			stale++
		}
		if x.Waiting {
			status += " (waiting)"
			waiting++
		}
		if x.Status == repository.TaskDoing && x.Paused {
			status += " (pausing)"
		}
		if x.TriggerRequested {
			status += " (+1 triggered)"
		}
		next := relTime(x.NextStartTime, now)
		if x.Status == repository.TaskFinished || (x.Parent != "" && x.Cron == "") || x.Stale {
			next = "-"
		}
		node := ""
		if x.NodeID != 0 {
			node = strconv.FormatInt(x.NodeID, 10)
		}
		if x.Broadcast {
			node = "all" // every live node runs each fire
		}
		cells := []string{strconv.FormatInt(x.ID, 10), x.Name}
		if dynamic > 0 {
			handler := ""
			if x.Dynamic {
				handler = x.Handler
			}
			cells = append(cells, handler)
		}
		parent := x.Parent
		if len(x.Parents) > 0 {
			parent = strings.Join(x.Parents, ",") // a DAG step: after all of them
		}
		t.row(append(cells, parent, cron, status, next, node,
			string(x.LastStatus), relTime(x.LastFinishedAt, now), truncate(oneLine(x.LastError), 40))...)
	}
	t.flush()
	if overridden > 0 {
		fmt.Fprintf(out, "\n%d task(s) rescheduled by an operator: the override holds until the code registers another cron ('easyjob reschedule NAME --reset' ends it)\n", overridden)
	}
	if dynamic > 0 {
		fmt.Fprintf(out, "\n%d schedule(s) created at runtime, run by their HANDLER ('easyjob update NAME' edits one, 'easyjob remove NAME' deletes it)\n", dynamic)
	}
	if waiting > 0 {
		fmt.Fprintf(out, "\n%d schedule(s) waiting: no live node registers their handler; they fire once a node with it runs\n", waiting)
	}
	if stale > 0 {
		fmt.Fprintf(out, "\n%d stale task(s): no live node registers them, so they do not fire ('easyjob remove NAME' deletes one)\n", stale)
	}
}

// orAfterParent shows an empty cron as what it means.
func orAfterParent(cron string) string {
	if cron == "" {
		return "(after parent)"
	}
	return cron
}
