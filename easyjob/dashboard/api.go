package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository"
)

// The JSON API (/api/v1/): what the pages show and the actions they take,
// plus the schedules created at runtime, for programs. docs/openapi.yaml
// describes it; apiRoutes is the list the tests compare with that file.

const (
	// apiPrefix is where the API's routes live, under the mount point.
	apiPrefix = "/api/v1"
	// maxBody bounds the body of a write: one schedule, a trigger's args.
	maxBody = 1 << 20
	// maxBatchBody bounds the body of a batch create.
	maxBatchBody = 16 << 20
	// maxBatch bounds the schedules of a batch create.
	maxBatch = 10000
	// maxLimit bounds the limit of a list, a history or audit page.
	maxLimit = 1000
)

// API serves the JSON API of the group of one easyjob.Client (see the
// package documentation and docs/openapi.yaml). The dashboard's Handler
// serves it under /api/v1/ too; NewAPI is for a service that wants the
// API without the pages. It is safe for concurrent use.
type API struct {
	client  *easyjob.Client
	opts    Options
	mux     *http.ServeMux
	changed func() // called after every write (the dashboard clears its cache)
}

// NewAPI returns the JSON API of c's group, with its routes under
// /api/v1/ (mount it with http.StripPrefix like the dashboard). Options
// apply as to the dashboard: ReadOnly refuses every write, CanAct decides
// per request, Actor names the audit log's user (recorded via "api");
// Refresh, Window and MaxRuns do not apply. The API does not close c.
func NewAPI(c *easyjob.Client, o Options) *API {
	return newAPI(c, o.withDefaults(), nil)
}

func newAPI(c *easyjob.Client, o Options, changed func()) *API {
	a := &API{client: c, opts: o, mux: http.NewServeMux(), changed: changed}
	for _, rt := range apiRoutes {
		a.mux.HandleFunc(rt.Method+" "+apiPrefix+rt.Path, a.endpoint(rt))
	}
	a.mux.HandleFunc(apiPrefix+"/", a.noRoute)
	return a
}

// apiRoute is one endpoint: its method, its path under /api/v1 (as in
// docs/openapi.yaml) and whether it writes.
type apiRoute struct {
	Method, Path string
	Write        bool
	serve        func(a *API, w http.ResponseWriter, r *http.Request) error
}

// apiRoutes are every endpoint of the API.
var apiRoutes = []apiRoute{
	{http.MethodGet, "/tasks", false, (*API).listTasks},
	{http.MethodPost, "/tasks", true, (*API).createTasks},
	{http.MethodGet, "/tasks/{name}", false, (*API).getTask},
	{http.MethodPut, "/tasks/{name}", true, (*API).updateTask},
	{http.MethodDelete, "/tasks/{name}", true, (*API).removeTask},
	{http.MethodPost, "/tasks/{name}/pause", true, (*API).pause},
	{http.MethodPost, "/tasks/{name}/resume", true, (*API).resume},
	{http.MethodPost, "/tasks/{name}/trigger", true, (*API).trigger},
	{http.MethodPost, "/tasks/{name}/backfill", true, (*API).backfill},
	{http.MethodPost, "/tasks/{name}/cancel", true, (*API).cancel},
	{http.MethodGet, "/tasks/{name}/history", false, (*API).history},
	{http.MethodGet, "/tasks/{name}/runs/{id}/log", false, (*API).runLog},
	{http.MethodGet, "/tasks/{name}/versions", false, (*API).versions},
	{http.MethodGet, "/tasks/{name}/explain", false, (*API).explain},
	{http.MethodGet, "/tasks/{name}/dag", false, (*API).fireGraph},
	{http.MethodGet, "/nodes", false, (*API).nodes},
	{http.MethodGet, "/handlers", false, (*API).handlers},
	{http.MethodGet, "/audit", false, (*API).audit},
	{http.MethodGet, "/calendars", false, (*API).listCalendars},
	{http.MethodPut, "/calendars/{name}", true, (*API).putCalendar},
	{http.MethodDelete, "/calendars/{name}", true, (*API).removeCalendar},
	{http.MethodGet, "/forecast", false, (*API).getForecast},
	{http.MethodGet, "/alerts", false, (*API).listAlerts},
	{http.MethodGet, "/alerts/rules", false, (*API).listAlertRules},
	{http.MethodPut, "/alerts/rules/{name}", true, (*API).putAlertRule},
	{http.MethodDelete, "/alerts/rules/{name}", true, (*API).removeAlertRule},
}

// ServeHTTP serves the API's routes; anything else under /api/v1/ is a
// JSON 404 (or 405 for a known path).
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = rooted(r)
	f, ok := r.Context().Value(frameKey{}).(frame)
	if !ok { // served alone (NewAPI)
		f.base = mountPoint(r)
		f.root = f.base
	}
	f.group = a.client.Group()
	r = r.WithContext(withFrame(r.Context(), f))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	a.mux.ServeHTTP(w, r)
}

// endpoint wraps a route: the checks of a write, then the route, whose
// error becomes the JSON error answer.
func (a *API) endpoint(rt apiRoute) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if rt.Write {
			if err := a.checkWrite(r); err != nil {
				a.fail(w, r, err)
				return
			}
		}
		if err := rt.serve(a, w, r); err != nil {
			a.fail(w, r, err)
		}
	}
}

// checkWrite refuses a write the request may not make: read-only, not
// allowed by CanAct, not JSON (a browser's form or a simple cross-site
// request cannot set that type without a preflight the API never
// answers), or cross-origin by the browser's own word.
func (a *API) checkWrite(r *http.Request) error {
	switch {
	case a.opts.ReadOnly:
		return apiErr(http.StatusForbidden, codeForbidden, "this API is read-only: writes are refused")
	case a.opts.CanAct != nil && !a.opts.CanAct(r):
		return apiErr(http.StatusForbidden, codeForbidden, "you may not act on this group: writes are refused")
	}
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return apiErr(http.StatusUnsupportedMediaType, codeMediaType,
			fmt.Sprintf("a write needs Content-Type: application/json (got %q)", ct))
	}
	if err := crossOrigin.Check(r); err != nil {
		return apiErr(http.StatusForbidden, codeForbidden, "refused: "+err.Error())
	}
	return nil
}

// noRoute answers a path the API does not serve (404), or a method a
// path does not take (405, with Allow).
func (a *API) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, pattern := a.mux.Handler(r2); pattern != apiPrefix+"/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		a.fail(w, r, apiErr(http.StatusMethodNotAllowed, codeMethod, fmt.Sprintf("%s is not allowed here (allowed: %s)", r.Method, strings.Join(allow, ", "))))
		return
	}
	a.fail(w, r, apiErr(http.StatusNotFound, codeNotFound, fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path)))
}

// ctx is r's context naming the request's actor for the audit log.
func (a *API) ctx(r *http.Request) context.Context {
	return easyjob.WithActor(r.Context(), requestActor(a.opts, r, "api"))
}

// wrote tells the dashboard, if any, that the state changed.
func (a *API) wrote() {
	if a.changed != nil {
		a.changed()
	}
}

// --- Tasks.

// listTasks lists a page of the group's tasks, by name: ?q= (name
// contains), ?show= (a filter of the task list), ?limit=, and a cursor:
// ?after= (the page after that name) or ?before= (the page before it).
func (a *API) listTasks(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	show := canonFilter(q.Get("show"))
	if show == "" {
		show = "all"
	}
	if !validFilter(show) {
		return apiErr(http.StatusBadRequest, codeRequest, fmt.Sprintf("show %q: want one of %s", show, strings.Join(taskFilters, ", ")))
	}
	limit, err := intParam(q, "limit", 100, 1, maxLimit)
	if err != nil {
		return err
	}
	tq := taskQuery(strings.TrimSpace(q.Get("q")), show)
	tq.After, tq.Before, tq.Limit = q.Get("after"), q.Get("before"), limit
	p, err := readTaskPage(r.Context(), a.client, tq)
	if err != nil {
		return err
	}
	out := taskList{Tasks: make([]apiTask, len(p.Tasks)), Total: p.Total, Capped: p.Capped, Prev: p.Prev, Next: p.Next}
	for i, t := range p.Tasks {
		out.Tasks[i] = newAPITask(t.TaskInfo, &t.Options)
	}
	if err := a.markWaiting(r.Context(), out.Tasks); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getTask returns one task with its policies.
func (a *API) getTask(w http.ResponseWriter, r *http.Request) error {
	t, err := a.readTask(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// readTask reads task name (Stale set, its parent named, its policies)
// in one query.
func (a *API) readTask(ctx context.Context, name string) (apiTask, error) {
	chain, err := readChain(ctx, a.client, name)
	if err != nil {
		return apiTask{}, err
	}
	for _, t := range chain {
		if t.Name == name {
			one := []apiTask{newAPITask(t.TaskInfo, &t.Options)}
			err := a.markWaiting(ctx, one)
			return one[0], err
		}
	}
	return apiTask{}, fmt.Errorf("%w: %q in group %q", easyjob.ErrTaskNotFound, name, a.client.Group())
}

// markWaiting sets Waiting on the runtime schedules of ts whose handler
// no live node registers, reading the live nodes when there is one.
func (a *API) markWaiting(ctx context.Context, ts []apiTask) error {
	if !slices.ContainsFunc(ts, func(t apiTask) bool { return t.Dynamic }) {
		return nil
	}
	live, err := repository.LiveTaskSets(ctx, a.client.Control(), a.client.Group(), a.client.LiveAfter())
	if err != nil {
		return fmt.Errorf("easyjob: read live nodes of group %q: %w", a.client.Group(), err)
	}
	for i := range ts {
		markWaiting(&ts[i].TaskInfo, live)
	}
	return nil
}

// written is the answer of a write that returned t: the task as read
// back (its policies included), or t itself when that read fails (the
// write happened all the same).
func (a *API) written(ctx context.Context, t easyjob.TaskInfo) apiTask {
	got, err := a.readTask(ctx, t.Name)
	if err != nil {
		a.opts.Logger.Warn("easyjob api: read back after a write failed", "task", t.Name, "err", err)
		return newAPITask(t, nil)
	}
	return got
}

// createTasks creates one schedule (a JSON object: 201 with the task) or
// a batch (an array, all or none: 201 with the tasks).
func (a *API) createTasks(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, maxBatchBody)
	if err != nil {
		return err
	}
	switch firstByte(body) {
	case '{':
		if len(body) > maxBody {
			return apiErr(http.StatusRequestEntityTooLarge, codeTooLarge, fmt.Sprintf("the body of one schedule is bounded to %d bytes", maxBody))
		}
		var in scheduleJSON
		if err := decodeStrict(body, &in); err != nil {
			return err
		}
		s, err := in.schedule()
		if err != nil {
			return err
		}
		t, err := a.client.Create(a.ctx(r), s, in.createOptions()...)
		if err != nil {
			return err
		}
		a.wrote()
		w.Header().Set("Location", baseOf(r)+apiPrefix+"/tasks/"+url.PathEscape(t.Name))
		writeJSON(w, http.StatusCreated, a.written(r.Context(), t))
		return nil
	case '[':
		return a.createBatch(w, r, body)
	}
	return apiErr(http.StatusBadRequest, codeRequest, "the body must be a JSON object (one schedule) or an array of them (a batch)")
}

// createBatch creates the schedules of a batch in one transaction.
func (a *API) createBatch(w http.ResponseWriter, r *http.Request, body []byte) error {
	var in []scheduleJSON
	if err := decodeStrict(body, &in); err != nil {
		return err
	}
	switch {
	case len(in) == 0:
		return apiErr(http.StatusBadRequest, codeRequest, "an empty batch: give at least one schedule")
	case len(in) > maxBatch:
		return apiErr(http.StatusRequestEntityTooLarge, codeTooLarge, fmt.Sprintf("a batch of %d schedules: at most %d", len(in), maxBatch))
	}
	ss := make([]easyjob.Schedule, len(in))
	for i, s := range in {
		if s.AllowUnknown != in[0].AllowUnknown {
			return apiErr(http.StatusBadRequest, codeRequest, "allow_unknown applies to the whole batch: give it the same value on every schedule")
		}
		var err error
		if ss[i], err = s.schedule(); err != nil {
			return fmt.Errorf("batch item %d: %w", i, err)
		}
	}
	ts, err := a.client.CreateMany(a.ctx(r), ss, in[0].createOptions()...)
	if err != nil {
		return err
	}
	a.wrote()
	// The created rows carry their policies: nothing is read back (a
	// read of the group's tasks would cost a million rows a batch).
	out := taskList{Tasks: make([]apiTask, len(ts)), Total: len(ts)}
	for i, t := range ts {
		out.Tasks[i] = newAPITask(t, &ts[i].Options)
	}
	if err := a.markWaiting(r.Context(), out.Tasks); err != nil {
		a.opts.Logger.Warn("easyjob api: read the live nodes after a batch create failed", "err", err)
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// updateTask replaces the definition of a schedule created at runtime.
func (a *API) updateTask(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	body, err := readBody(w, r, maxBody)
	if err != nil {
		return err
	}
	var in scheduleJSON
	if err := decodeStrict(body, &in); err != nil {
		return err
	}
	if in.Name != "" && in.Name != name {
		return apiErr(http.StatusBadRequest, codeRequest, fmt.Sprintf("the body names %q, the path %q: a schedule cannot be renamed", in.Name, name))
	}
	in.Name = name
	s, err := in.schedule()
	if err != nil {
		return err
	}
	t, err := a.client.Update(a.ctx(r), s, in.createOptions()...)
	if err != nil {
		return err
	}
	a.wrote()
	writeJSON(w, http.StatusOK, a.written(r.Context(), t))
	return nil
}

// removeTask removes a task (?force=, ?drop_history=) and answers the
// tasks removed, the named one first.
func (a *API) removeTask(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	force, err := boolParam(q, "force")
	if err != nil {
		return err
	}
	drop, err := boolParam(q, "drop_history")
	if err != nil {
		return err
	}
	ts, err := a.client.Remove(a.ctx(r), r.PathValue("name"), easyjob.RemoveOptions{Force: force, DropHistory: drop})
	if err != nil {
		return err
	}
	a.wrote()
	out := removed{Removed: make([]apiTask, len(ts))}
	for i, t := range ts {
		out.Removed[i] = newAPITask(t, nil)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) pause(w http.ResponseWriter, r *http.Request) error {
	return a.control(w, r, a.client.Pause)
}

func (a *API) resume(w http.ResponseWriter, r *http.Request) error {
	return a.control(w, r, a.client.Resume)
}

// control runs a pause or resume and answers the task.
func (a *API) control(w http.ResponseWriter, r *http.Request, op func(context.Context, string) (easyjob.TaskInfo, error)) error {
	t, err := op(a.ctx(r), r.PathValue("name"))
	if err != nil {
		return err
	}
	a.wrote()
	writeJSON(w, http.StatusOK, a.written(r.Context(), t))
	return nil
}

// trigger asks for one fire as soon as possible, with the body's args
// (optional) instead of the schedule's: 202 with the task.
func (a *API) trigger(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, maxBody)
	if err != nil {
		return err
	}
	var in triggerJSON
	if len(bytes.TrimSpace(body)) > 0 {
		if err := decodeStrict(body, &in); err != nil {
			return err
		}
	}
	var opts []easyjob.TriggerOption
	if args := bytes.TrimSpace(in.Args); len(args) > 0 && string(args) != "null" {
		opts = append(opts, easyjob.WithArgs(json.RawMessage(args)))
	}
	t, err := a.client.Trigger(a.ctx(r), r.PathValue("name"), opts...)
	if err != nil {
		return err
	}
	a.wrote()
	writeJSON(w, http.StatusAccepted, a.written(r.Context(), t))
	return nil
}

// cancel asks the node running the task's fire to cancel its job: 202
// with the task; 409 not_running when no run is in progress.
func (a *API) cancel(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if err := a.client.Cancel(a.ctx(r), name); err != nil {
		return err
	}
	a.wrote()
	t, err := a.client.Task(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, a.written(r.Context(), t))
	return nil
}

// backfill runs a task for every fire of a past range: {"from", "to"}
// (RFC 3339; "to" defaults to now). It answers the fires asked for.
func (a *API) backfill(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, maxBody)
	if err != nil {
		return err
	}
	var in backfillJSON
	if err := decodeStrict(body, &in); err != nil {
		return err
	}
	if in.From.IsZero() {
		return apiErr(http.StatusBadRequest, codeRequest, "from is required: the start of the range (RFC 3339)")
	}
	ctx := a.ctx(r)
	to := in.To
	if to.IsZero() {
		if to, err = a.client.Now(ctx); err != nil {
			return err
		}
	}
	name := r.PathValue("name")
	fires, err := a.client.Backfill(ctx, name, in.From, to)
	if err != nil {
		return err
	}
	a.wrote()
	writeJSON(w, http.StatusAccepted, backfillReply{Task: name, Fires: fires})
	return nil
}

// history lists a task's runs, newest first: ?status=, ?since=,
// ?before_id=, ?limit=.
func (a *API) history(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f easyjob.HistoryFilter
	if s := q.Get("status"); s != "" {
		st, err := repository.ParseExecStatus(s)
		if err != nil {
			return apiErr(http.StatusBadRequest, codeRequest, fmt.Sprintf("status %q: want one of %s", s, strings.Join(historyStatuses[1:], ", ")))
		}
		f.Status = st
	}
	var err error
	if f.Since, err = timeParam(q, "since"); err != nil {
		return err
	}
	if f.BeforeID, err = idParam(q, "before_id"); err != nil {
		return err
	}
	if f.Limit, err = intParam(q, "limit", 100, 1, maxLimit); err != nil {
		return err
	}
	xs, err := a.client.History(r.Context(), r.PathValue("name"), f)
	if err != nil {
		return err
	}
	out := runList{Runs: orEmpty(xs)}
	if len(xs) == f.Limit {
		out.NextBeforeID = xs[len(xs)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// --- The group.

func (a *API) nodes(w http.ResponseWriter, r *http.Request) error {
	ns, err := a.client.Nodes(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nodeList{Nodes: orEmpty(ns)})
	return nil
}

func (a *API) handlers(w http.ResponseWriter, r *http.Request) error {
	hs, err := a.client.Handlers(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, handlerList{Handlers: orEmpty(hs)})
	return nil
}

// audit lists the audit log, newest first: ?task=, ?since=, ?before_id=,
// ?limit=.
func (a *API) audit(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := easyjob.AuditFilter{Task: q.Get("task")}
	var err error
	if f.Since, err = timeParam(q, "since"); err != nil {
		return err
	}
	if f.BeforeID, err = idParam(q, "before_id"); err != nil {
		return err
	}
	if f.Limit, err = intParam(q, "limit", 100, 1, maxLimit); err != nil {
		return err
	}
	es, err := a.client.Audit(r.Context(), f)
	if err != nil {
		return err
	}
	out := auditList{Entries: es}
	out.Entries = orEmpty(out.Entries)
	if len(es) == f.Limit {
		out.NextBeforeID = es[len(es)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// --- Requests.

// readBody reads r's body, at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, apiErr(http.StatusRequestEntityTooLarge, codeTooLarge, fmt.Sprintf("the body is bounded to %d bytes", limit))
	case err != nil:
		return nil, apiErr(http.StatusBadRequest, codeRequest, "unreadable body: "+err.Error())
	}
	return b, nil
}

// firstByte is the first byte of b that is not JSON white space, 0 if none.
func firstByte(b []byte) byte {
	if b = bytes.TrimLeft(b, " \t\r\n"); len(b) > 0 {
		return b[0]
	}
	return 0
}

// decodeStrict decodes the JSON value b into v: unknown fields and
// trailing data are refused.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			where := "the body"
			if typeErr.Field != "" {
				where = typeErr.Field
			}
			return apiErr(http.StatusBadRequest, codeRequest, fmt.Sprintf("invalid JSON body: %s: want %s, got %s", where, jsonKind(typeErr.Type), typeErr.Value))
		}
		return apiErr(http.StatusBadRequest, codeRequest, "invalid JSON body: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apiErr(http.StatusBadRequest, codeRequest, "invalid JSON body: data after the value")
	}
	return nil
}

// jsonKind names the JSON kind of values of t.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	}
	return t.Kind().String()
}

// intParam reads the integer query parameter name, def when absent,
// refused outside [lo, hi].
func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, apiErr(http.StatusBadRequest, codeRequest, fmt.Sprintf("%s=%q: want an integer from %d to %d", name, s, lo, hi))
	}
	return n, nil
}

// idParam reads a positive id (0 when absent).
func idParam(q url.Values, name string) (int64, error) {
	s := q.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, apiErr(http.StatusBadRequest, codeRequest, fmt.Sprintf("%s=%q: want a positive id", name, s))
	}
	return n, nil
}

// boolParam reads a boolean (false when absent).
func boolParam(q url.Values, name string) (bool, error) {
	s := q.Get(name)
	if s == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, apiErr(http.StatusBadRequest, codeRequest, fmt.Sprintf("%s=%q: want true or false", name, s))
	}
	return v, nil
}

// timeParam reads an RFC 3339 time (zero when absent).
func timeParam(q url.Values, name string) (time.Time, error) {
	s := q.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, apiErr(http.StatusBadRequest, codeRequest, fmt.Sprintf("%s=%q: want an RFC 3339 time", name, s))
	}
	return t, nil
}

// --- Answers.

// writeJSON writes v as the JSON answer with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorJSON{Error: "easyjob api: encode the answer: " + err.Error(), Code: codeInternal})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// The stable error codes of the API (errorJSON.Code).
const (
	codeRequest         = "invalid_request"
	codeMediaType       = "unsupported_media_type"
	codeTooLarge        = "too_large"
	codeForbidden       = "forbidden"
	codeNotFound        = "not_found"
	codeMethod          = "method_not_allowed"
	codeInvalidArgs     = "invalid_args"
	codeUnknownHandler  = "unknown_handler"
	codeInvalidCron     = "invalid_cron"
	codeInvalidName     = "invalid_name"
	codeInvalidOption   = "invalid_option"
	codeInvalidCalendar = "invalid_calendar"
	codeExists          = "exists"
	codeNotDynamic      = "not_dynamic"
	codeNotTriggerable  = "not_triggerable"
	codeInUse           = "in_use"
	codeInvalidBackfill = "invalid_backfill"
	codeBackfillRunning = "backfill_in_progress"
	codeNotRunning      = "not_running"
	codeInvalidRule     = "invalid_alert_rule"
	codeInternal        = "internal"
)

// sentinelCodes map the library's errors to an HTTP status and a code,
// checked in order.
var sentinelCodes = []struct {
	err    error
	status int
	code   string
}{
	{easyjob.ErrTaskNotFound, http.StatusNotFound, codeNotFound},
	{easyjob.ErrRunNotFound, http.StatusNotFound, codeNotFound},
	{easyjob.ErrCalendarNotFound, http.StatusNotFound, codeNotFound},
	{easyjob.ErrInvalidCalendar, http.StatusBadRequest, codeInvalidCalendar},
	{easyjob.ErrInvalidArgs, http.StatusBadRequest, codeInvalidArgs},
	// No live node registers the handler: the cluster's state, not the
	// request, is in the way (allow_unknown creates it waiting).
	{easyjob.ErrUnknownHandler, http.StatusConflict, codeUnknownHandler},
	{easyjob.ErrInvalidCron, http.StatusBadRequest, codeInvalidCron},
	{easyjob.ErrInvalidName, http.StatusBadRequest, codeInvalidName},
	{easyjob.ErrInvalidOption, http.StatusBadRequest, codeInvalidOption},
	{easyjob.ErrTaskExists, http.StatusConflict, codeExists},
	{easyjob.ErrNotDynamic, http.StatusConflict, codeNotDynamic},
	{easyjob.ErrNotTriggerable, http.StatusConflict, codeNotTriggerable},
	{easyjob.ErrTaskInUse, http.StatusConflict, codeInUse},
	{easyjob.ErrInvalidBackfill, http.StatusBadRequest, codeInvalidBackfill},
	{easyjob.ErrBackfillInProgress, http.StatusConflict, codeBackfillRunning},
	{easyjob.ErrNotRunning, http.StatusConflict, codeNotRunning},
	{alert.ErrRuleNotFound, http.StatusNotFound, codeNotFound},
	{alert.ErrInvalidRule, http.StatusBadRequest, codeInvalidRule},
}

// errorCodes lists every code the API answers, for the OpenAPI test.
func errorCodes() []string {
	codes := []string{codeRequest, codeMediaType, codeTooLarge, codeForbidden, codeMethod, codeInternal}
	for _, c := range sentinelCodes {
		if !slices.Contains(codes, c.code) {
			codes = append(codes, c.code)
		}
	}
	return codes
}

// requestError is an error of the request itself, with its answer.
type requestError struct {
	status int
	code   string
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func apiErr(status int, code, msg string) error { return &requestError{status, code, msg} }

// classify returns the HTTP status and code of err, ok false for an
// error that is none of the library's sentinels nor the request's (a
// failed read or write of the store).
func classify(err error) (status int, code string, ok bool) {
	var re *requestError
	if errors.As(err, &re) {
		return re.status, re.code, true
	}
	for _, c := range sentinelCodes {
		if errors.Is(err, c.err) {
			return c.status, c.code, true
		}
	}
	return http.StatusInternalServerError, codeInternal, false
}

// fail answers err as JSON. A store failure is logged; the answer says
// only what kind of failure it was (a driver's error names the user, the
// database and the host).
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code, ok := classify(err)
	msg := err.Error()
	if !ok {
		a.opts.Logger.Error("easyjob api: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		msg = "easyjob: " + failureKind(err) + "; the service's log has the details"
	}
	writeJSON(w, status, errorJSON{Error: msg, Code: code})
}

// orEmpty is xs, or an empty slice for nil: a list is [] in the API's
// JSON, never null.
func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
