// Command easyjob is the operator CLI of easy-job, plus the measurement
// harness (bench, chaos).
//
// Usage:
//
//	easyjob <command> [flags] [arguments]
//	easyjob help
//	easyjob <command> -h
//
// Operator commands act on the tasks and nodes of one group (--group,
// default "default") in the database of --dsn (default $EASYJOB_DSN, else
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable); --json
// prints JSON instead of tables, --timeout bounds the command:
//
//	migrate up|down|status  apply, revert or show the database schema
//	status                  show the nodes and tasks of a group
//	tasks                   list the tasks of a group
//	nodes                   list the nodes of a group (live, suspect, dead)
//	history NAME            list the runs of a task, newest first
//	trigger NAME            run a task once as soon as possible
//	pause NAME              stop the fires of a task (a running fire completes)
//	resume NAME             let a paused task fire again
//	reschedule NAME CRON    give a task a new cron expression
//
// Their exit statuses: 0 ok, 1 the operation failed (e.g. the database is
// unreachable), 2 usage, 3 unknown task, 4 invalid input (a cron
// expression). A failure prints one line to stderr, with any password of
// the DSN hidden.
//
// Harness commands (package internal/harness) create a scratch database
// next to the one --dsn names, run easyjob nodes on it and drop it:
//
//	bench   measure fires/s, start lag, round trips, CPU and memory of N nodes
//	chaos   kill, freeze and restart node processes; report failover,
//	        duplicates, lost fires (exit status 1 on a violation)
//
// A third, hidden command, _node, is one node process: bench --procs and
// chaos start them by re-executing this binary.
//
// Every command is one entry of the table in commands.go, which main
// dispatches from and `easyjob help` lists.
package main
