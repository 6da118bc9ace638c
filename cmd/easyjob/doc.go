// Command easyjob is the operator CLI of easy-job, plus the measurement
// harness (bench, chaos).
//
// Usage:
//
//	easyjob <command> [flags] [arguments]
//	easyjob [flags] <command> [arguments]
//	easyjob help
//	easyjob <command> -h
//
// Operator commands act on the tasks and nodes of one group (--group,
// default "default") in the database of --dsn, else $EASYJOB_DSN (one of
// the two is required: there is no default server); --json prints JSON
// instead of tables (durations name their unit, e.g. heartbeat_age_seconds),
// --timeout bounds the command. --actor NAME names who acts, else
// $EASYJOB_ACTOR, else the OS user: the audit log records every create,
// update, pause, resume, trigger, reschedule and removal under it, via
// "cli", from this host (a name with control characters is refused). Flags
// may come before the command or anywhere after it:
//
//	migrate up|down|status  apply, revert or show the database schema
//	status                  show the nodes and tasks of a group
//	tasks                   list the tasks of a group, by name, 1000 at
//	                        most (--limit N, 0 for all; --after NAME for
//	                        the next page, which stderr names; --search)
//	nodes                   list the nodes of a group (live, suspect, dead)
//	history NAME            list the runs of a task, newest first, with
//	                        their kind (cron, manual, retry, misfire, chain)
//	                        and arguments (ARGS, cut at 40 characters;
//	                        --json has them in full)
//	calendar set NAME [--date D]... [--range FROM..TO]... [--cron EXPR]... [--tz Z]
//	calendar list | calendar remove NAME
//	                        the group's exclusion calendars: tasks that
//	                        name one (--calendar, easyjob.Calendar) skip
//	                        the fires it excludes, recorded as skipped
//	explain NAME [--at TIME]
//	                        the task's next fires, or why it fires no
//	                        more (paused, stale, waiting, finished); with
//	                        --at, what became of that fire: its runs, or
//	                        why none (paused then, not yet created, not a
//	                        fire of the cron then, its node died, ...)
//	forecast [--hours 24] [--top 10] [--by hour|minute]
//	                        count the fires of the group's schedules per
//	                        second over the next hours: the total, the
//	                        peak seconds and the fires per hour or minute
//	                        with each one's busiest second (--spread on
//	                        create and update flattens a storm)
//	create NAME --handler KIND --cron SPEC [--args JSON]
//	                        create a schedule at runtime, run by the
//	                        handler kind a node registers (easyjob.Handle)
//	                        with the JSON arguments; options --tz,
//	                        --run-timeout, --retries, --retry-backoff,
//	                        --misfire fire_once_now|skip|catch_up[:N],
//	                        --misfire-after, --skip-interrupted,
//	                        --every-from-creation, --paused. The handler
//	                        must be registered by a live node (else
//	                        --allow-unknown) and the arguments must decode
//	                        into its argument type: otherwise nothing is
//	                        written
//	update NAME [--handler KIND] [--cron SPEC] [--args JSON]
//	                        replace the definition of a schedule created at
//	                        runtime, checked as by create; every flag not
//	                        given keeps the schedule's current value (read
//	                        just before: an update by someone else in
//	                        between is overwritten); --args null drops the
//	                        arguments
//	trigger NAME            run a task once as soon as possible; --args
//	                        JSON runs that fire with these arguments
//	pause NAME              stop the fires of a task (a running fire completes)
//	resume NAME             let a paused task fire again
//	reschedule NAME CRON    override the cron of a task; it holds across
//	                        restarts until the code registers another cron
//	reschedule NAME --reset end the override: back to the code's cron
//	remove NAME             delete a schedule created at runtime, or a stale
//	                        task (no live node registers it) and its
//	                        children; --force for any task,
//	                        --drop-history to delete its runs too
//	audit                   list the audit log, newest first: who did what
//	                        to which task, when (--task NAME, --limit N,
//	                        --before ID, --since 24h or an RFC 3339 time)
//
//	dashboard               serve the web dashboard (--addr, default
//	                        127.0.0.1:8080; --read-only; basic auth from
//	                        EASYJOB_DASHBOARD_USER / _PASSWORD)
//
// status and tasks mark overridden tasks (with the code's cron) and stale
// ones, and show the HANDLER of the schedules created at runtime; a group
// with no tasks and no nodes prints the groups that exist.
//
// Their exit statuses: 0 ok, 1 the operation failed (e.g. the database is
// unreachable, or migrate status found a schema newer than the binary),
// 2 usage (no database given, bad flags or arguments), 3 unknown task,
// 4 invalid input (a cron expression, a schedule's arguments, a handler
// kind no live node registers), 5 remove refused (a live node registers
// the task), 6 refused (a trigger no node would run, an update of a task
// registered in code), 7 create refused (the name is taken). A failure
// prints one line to stderr, with any password of the DSN hidden.
//
// Harness commands (package internal/harness) create a scratch database
// next to the one --dsn names (default $EASYJOB_DSN, else a local server),
// run easyjob nodes on it and drop it:
//
//	bench   measure fires/s, start lag, round trips, CPU and memory of N nodes
//	        (--schedules N: on N runtime schedules created first; --burst B)
//	        (--schedules N: on N runtime schedules created first; --burst B)
//	chaos   kill, freeze and restart node processes; report failover,
//	        duplicates, lost fires (exit status 1 on a violation)
//
// A third, hidden command, _node, is one node process: bench --procs and
// chaos start them by re-executing this binary.
//
// Every command is one entry of the table in commands.go, which main
// dispatches from and `easyjob help` lists.
package main
