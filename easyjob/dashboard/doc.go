// Package dashboard is the web dashboard of an easyjob group: an
// http.Handler a service mounts under any prefix, and what the standalone
// `easyjob dashboard` command serves.
//
// Views (server-rendered HTML; the style sheet and one small script are
// embedded, nothing to build):
//
//   - overview: live, leaving, suspect and dead nodes with heartbeat age
//     and load; tasks by state (failing, stale); fires per minute, start
//     lag p50/p99; failures of the last hour; a timeline of recent fires
//     per node (an SVG: who ran what, when; failures flagged, abandoned
//     runs crossed and linked to the re-run that recovered them, each
//     node's start and last heartbeat), so a failover shows at a glance;
//   - tasks: search, filters (pending, doing, paused, finished, failing,
//     stale) and pages of 50; each task's cron in words, next fires,
//     owner node, status, last result;
//   - a task: its policies (misfire, timeout, retries, recovery), its
//     chain as a tree, its runs filtered by status and time and paged,
//     why each ran (its kind: cron, manual, retry, misfire, chain, so
//     that a cron run and a manual one in the same second read as two
//     fires, not a double fire), the misfire policy applied to each, what
//     abandoned and fenced mean, and the task's last operator actions;
//   - nodes;
//   - the audit log (/audit, by task, paged): who paused, resumed,
//     triggered, rescheduled, reset, removed or pruned what, when, via
//     which tool and from where. Anyone who may see the dashboard may
//     read it.
//
// Actions go through easyjob.Client, with the CLI's semantics: trigger,
// pause, resume, reschedule (validated, the next fires shown before it is
// saved). They are refused in read-only mode (Options.ReadOnly) and, per
// request, when Options.CanAct says so. The client records each in the
// audit log, with the action, under the request's user (Options.Actor;
// by default the basic-auth user, else "anonymous"), via "dashboard",
// from the request's remote host. Every action is a POST that needs
// the page's CSRF token and a same-origin request. Everything shown is
// escaped by html/template; pages forbid inline scripts (CSP).
//
// Authentication is the embedder's: wrap the handler in the service's own
// middleware (BasicAuth is one, used by the standalone command).
//
// Pages refresh themselves by polling (every Options.Refresh, while
// visible). Reads are shared by every open page for one refresh interval,
// and each is an aggregate or a page of the client's store (views.go:
// Overview, TaskPage, the chain, a task's runs, the recent runs, read
// through Client.Control): an open overview costs the
// database about five queries per refresh, whatever the number of tasks
// and the length of the history.
package dashboard
