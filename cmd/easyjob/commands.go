package main

import (
	"context"

	"github.com/easyjob-go/easyjob/cmd/easyjob/internal/harness"
)

// command is one subcommand of easyjob.
type command struct {
	name   string
	help   string // one line, listed by `easyjob help`
	hidden bool   // not listed: started by the harness, not by people
	// run parses args (the command line after the name) with its own
	// flag.FlagSet and returns the process exit status.
	run func(ctx context.Context, args []string) int
}

// commands is the command table: main dispatches from it and usage lists
// it. Adding a command is adding an entry here (and its file).
var commands = []command{
	// Operator commands: the database of --dsn, the group of --group (by
	// default the database's only group).
	operator("migrate", "apply, revert or show the database schema",
		operation{args: "up|down|status", minArgs: 1, maxArgs: 1, raw: true, flags: migrateFlags}),
	operator("groups", "list every group of the database: tasks, running, paused, failing, live nodes, fires and failures",
		operation{groupless: true, flags: groupsFlags}),
	operator("status", "show the nodes and tasks of a group",
		operation{liveness: true, flags: statusFlags(true, true)}),
	operator("tasks", "list the tasks of a group",
		operation{flags: statusFlags(false, true)}),
	operator("nodes", "list the nodes of a group (live, suspect, dead)",
		operation{liveness: true, flags: statusFlags(true, false)}),
	operator("history", "list the runs of a task, newest first",
		operation{args: "NAME", minArgs: 1, maxArgs: 1, flags: historyFlags}),
	operator("logs", "print what a run of a task logged through easyjob.Logger (its newest run, or RUN, an id from history; --follow: as it runs)",
		operation{args: "NAME [RUN] [--follow]", minArgs: 1, maxArgs: 2, flags: logsFlags}),
	operator("create", "create a schedule at runtime: a handler kind a node registers, a cron and JSON arguments",
		operation{args: "NAME --handler KIND --cron SPEC [--args JSON]", minArgs: 1, maxArgs: 1, flags: createFlags}),
	operator("update", "replace the handler, cron, arguments or options of a schedule created at runtime",
		operation{args: "NAME [--handler KIND] [--cron SPEC] [--args JSON]", minArgs: 1, maxArgs: 1, flags: updateFlags}),
	operator("explain", "say when a task fires next, and why the fire at a time ran, ran late or did not run (--at)",
		operation{args: "NAME [--at TIME]", minArgs: 1, maxArgs: 1, flags: explainFlags}),
	operator("forecast", "count the fires of the group's schedules per second over the next hours: total, peak seconds, per hour or minute",
		operation{args: "[--hours 24] [--top 10] [--by hour|minute]", flags: forecastFlags}),
	operator("versions", "list the definitions a task took, newest first: who changed its handler, cron or arguments, and when",
		operation{args: "NAME", minArgs: 1, maxArgs: 1, flags: versionsFlags}),
	operator("trigger", "run a task once as soon as possible (--args: with these arguments)",
		operation{args: "NAME", minArgs: 1, maxArgs: 1, flags: controlFlags("trigger")}),
	operator("backfill", "run a task for every fire it would have had in a past range, one after another (kind backfill)",
		operation{args: "NAME --from TIME [--to TIME]", minArgs: 1, maxArgs: 1, flags: backfillFlags}),
	operator("cancel", "cancel the run of a task in progress: its job's context ends on whichever node runs it (--wait: until it ends)",
		operation{args: "NAME [--wait]", minArgs: 1, maxArgs: 1, flags: cancelFlags}),
	operator("pause", "stop the fires of a task (a running fire completes)",
		operation{args: "NAME", minArgs: 1, maxArgs: 1, flags: controlFlags("pause")}),
	operator("resume", "let a paused task fire again",
		operation{args: "NAME", minArgs: 1, maxArgs: 1, flags: controlFlags("resume")}),
	operator("reschedule", "override the cron of a task (kept across restarts; --reset ends it)",
		operation{args: "NAME CRON | NAME --reset", minArgs: 1, maxArgs: -1, flags: rescheduleFlags}),
	operator("remove", "delete a schedule created at runtime, or a task no live node registers (stale); its history is kept",
		operation{args: "NAME", minArgs: 1, maxArgs: 1, flags: removeFlags}),
	operator("calendar", "set, list or remove the group's exclusion calendars: dates, date ranges and crons that tasks naming them do not fire on",
		operation{args: "set NAME [--date D]... [--range FROM..TO]... [--cron EXPR]... | list | remove NAME", minArgs: 1, maxArgs: 2, flags: calendarFlags}),
	operator("alerts", "list, add or remove the group's runtime alert rules, or list its alerts (history), newest first",
		operation{args: "list | add [NAME] --kind KIND [--task T] [--count N] [--after D] [--webhook URL] | remove NAME | history [--open]", minArgs: 1, maxArgs: 2, flags: alertsFlags}),
	operator("audit", "list who created, updated, paused, resumed, triggered, rescheduled, removed or pruned what, newest first",
		operation{flags: auditFlags}),
	{name: "dashboard", help: "serve the web dashboard of a group (--addr, --read-only)", run: dashboardCommand},

	// The measurement harness: scratch databases next to the one --dsn names.
	{name: "bench", help: "measure fires/s, start lag, round trips, CPU and memory of N nodes", run: harness.Bench},
	{name: "chaos", help: "kill, freeze and restart node processes; report failover, duplicates, lost fires", run: harness.Chaos},
	{name: harness.NodeCommand, help: "one node process (started by bench --procs and chaos)", hidden: true, run: harness.Node},
}

// lookup returns the command called name.
func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}
