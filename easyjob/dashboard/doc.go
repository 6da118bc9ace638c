// Package dashboard is the web dashboard of an easyjob group: an
// http.Handler a service mounts under any prefix, and what the standalone
// `easyjob dashboard` command serves.
//
// Views (server-rendered HTML; the style sheet and one small script are
// embedded, nothing to build):
//
//   - overview: live, leaving, suspect and dead nodes with heartbeat age
//     and load; tasks by state (failing, stale); fires per minute, start
//     lag p50/p99; failures of the last hour; fires per second by node
//     (an SVG chart); a timeline of recent fires per node (an SVG: who
//     ran what, when; chain steps under the run that started them;
//     failures flagged, abandoned runs crossed and linked to the re-run
//     that recovered them, each node's start and last heartbeat), so a
//     failover shows at a glance;
//   - tasks: search, filters (pending, running, paused, finished, failing,
//     stale) and pages of 50; each task's cron in words, next fires,
//     owner node, status, last result;
//   - a task: its policies (misfire, timeout, retries, recovery), its
//     chain as a tree, its runs filtered by status and time and paged
//     (charted: start lag and duration over time, outcome bars),
//     why each ran (its kind: cron, manual, retry, misfire, chain, so
//     that a cron run and a manual one in the same second read as two
//     fires, not a double fire), the misfire policy applied to each, what
//     abandoned and fenced mean, and the task's last operator actions;
//   - nodes;
//   - the audit log (/audit, by task, paged): who paused, resumed,
//     triggered, rescheduled, reset, removed or pruned what, when, via
//     which tool and from where. Anyone who may see the dashboard may
//     read it;
//   - the schedules created at runtime (easyjob.Client.Create): a "New
//     schedule" form (/schedule/new: name, handler kind, offered from
//     those the nodes publish, cron or one-off time, args as JSON, time
//     zone, paused, policies), their edit (/schedule/edit), and on the
//     task page their handler, args and revision and a trigger with args
//     of its own; a form the library refuses comes back filled in with
//     its message (which names the field). Each run shows its args and
//     its kind.
//
// Several groups: with Options.Groups (or Options.AllGroups, every group
// the database holds) the handler also serves each of those groups'
// pages and JSON API under /g/{group}/, every page carries a group
// switcher, and /groups is the all-groups overview (one row per group:
// tasks, running, paused, failing, live nodes, fires in the last minute,
// failures in the last hour and the last one; GET /api/v1/groups in
// JSON), each count read from indexes whatever a group holds. The
// client's group stays at the root: existing URLs keep working.
// Options.CanAct reads the group acted on with RequestGroup.
//
// Actions go through easyjob.Client, with the CLI's semantics: trigger
// (with args, for a runtime schedule), pause, resume, reschedule
// (validated, the next fires shown before it is saved), create and
// update. They are refused in read-only mode (Options.ReadOnly) and, per
// request, when Options.CanAct says so. The client records each in the
// audit log, with the action, under the request's user (Options.Actor;
// by default the basic-auth user, else "anonymous"), via "dashboard",
// from the request's remote host. Every action is a POST that needs
// the page's CSRF token and a same-origin request. Everything shown is
// escaped by html/template; pages forbid inline scripts (CSP).
//
// # JSON API
//
// The handler also serves a JSON API under /api/v1/ (NewAPI serves it
// alone, for a service that wants no pages), described by
// docs/openapi.yaml:
//
//	GET    /api/v1/tasks                  a page of tasks (?q= ?show= ?limit= ?offset=)
//	POST   /api/v1/tasks                  create a schedule, or a batch (an array: all or none)
//	GET    /api/v1/tasks/{name}           one task, with its policies
//	PUT    /api/v1/tasks/{name}           replace a runtime schedule's definition
//	DELETE /api/v1/tasks/{name}           remove (?force= ?drop_history=)
//	POST   /api/v1/tasks/{name}/pause     pause
//	POST   /api/v1/tasks/{name}/resume    resume
//	POST   /api/v1/tasks/{name}/trigger   one fire now, optionally {"args": ...}
//	GET    /api/v1/tasks/{name}/history   its runs (?status= ?since= ?before_id= ?limit=)
//	GET    /api/v1/tasks/{name}/versions  the definitions it took, newest first, by whom and when
//	GET    /api/v1/nodes                  the nodes
//	GET    /api/v1/handlers               the handler kinds the nodes publish
//	GET    /api/v1/audit                  the audit log (?task= ?since= ?before_id= ?limit=)
//
// The same Options apply: a write is refused with 403 when the handler
// is read-only or CanAct says no, and recorded in the audit log under
// Options.Actor's user, via "api". A write must be sent with
// Content-Type: application/json (415 otherwise): a page of another site
// cannot send one without a CORS preflight, which the API never answers,
// so no CSRF token is needed; a request the browser marks as cross-origin
// is refused as well. Bodies are bounded (1 MiB; 16 MiB and 10,000
// schedules for a batch) and unknown fields refused. An error answers
// {"error": the library's message, "code": a stable code}: invalid_args,
// invalid_cron, invalid_name, invalid_option, invalid_request (400);
// forbidden (403); not_found (404); exists, unknown_handler, not_dynamic,
// not_triggerable, in_use (409); too_large (413); unsupported_media_type
// (415); internal (500, the details in the log only).
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
