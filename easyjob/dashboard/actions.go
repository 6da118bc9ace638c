package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// action runs one operator action from a form: op (trigger, pause,
// resume, reschedule, backfill, cancel), name, cron (reschedule), args (trigger: JSON run
// arguments instead of the schedule's own), the CSRF token, and back
// (the task list's query, when the form was on the list). It answers
// 303 See Other to the page the form was on. The audit log records the
// action under the request's actor (Options.Actor).
func (h *site) action(w http.ResponseWriter, r *http.Request) {
	if !h.canAct(r) {
		h.fail(w, r, http.StatusForbidden, "This dashboard is read-only for you: actions are not allowed.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody) // a trigger's args
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, http.StatusBadRequest, "unreadable form: "+err.Error())
		return
	}
	if err := checkCSRF(r); err != nil {
		h.fail(w, r, http.StatusForbidden, "Refused: "+err.Error())
		return
	}
	op, name := r.PostFormValue("op"), r.PostFormValue("name")
	// The client records the action in the audit log under this actor,
	// with the action itself.
	ctx := easyjob.WithActor(r.Context(), h.actor(r))
	var err error
	switch op {
	case "trigger":
		var opts []easyjob.TriggerOption
		if args := strings.TrimSpace(r.PostFormValue("args")); args != "" {
			opts = append(opts, easyjob.WithArgs(json.RawMessage(args)))
		}
		_, err = h.client.Trigger(ctx, name, opts...)
	case "pause":
		_, err = h.client.Pause(ctx, name)
	case "resume":
		_, err = h.client.Resume(ctx, name)
	case "reschedule":
		_, err = h.client.Reschedule(ctx, name, r.PostFormValue("cron"))
	case "backfill":
		err = h.backfill(ctx, name, r.PostFormValue("from"), r.PostFormValue("to"))
	case "cancel":
		err = h.client.Cancel(ctx, name)
	default:
		h.fail(w, r, http.StatusBadRequest, fmt.Sprintf("unknown action %q", op))
		return
	}
	h.cache.clear() // whatever happened, show the state as it is now
	switch {
	case errors.Is(err, easyjob.ErrTaskNotFound):
		h.notFound(w, r, name)
		return
	case op == "trigger" && errors.Is(err, easyjob.ErrInvalidArgs):
		h.triggerFailed(w, r, name, err)
		return
	case errors.Is(err, easyjob.ErrNotTriggerable):
		h.fail(w, r, http.StatusConflict, "Not triggered: "+err.Error())
		return
	case errors.Is(err, easyjob.ErrNotRunning):
		h.fail(w, r, http.StatusConflict, "Not cancelled: "+err.Error()+" (its run ended)")
		return
	case errors.Is(err, easyjob.ErrInvalidBackfill), errors.Is(err, errBadTime):
		h.fail(w, r, http.StatusUnprocessableEntity, "Not backfilled: "+err.Error())
		return
	case errors.Is(err, easyjob.ErrBackfillInProgress):
		h.fail(w, r, http.StatusConflict, "Not backfilled: "+err.Error())
		return
	case errors.Is(err, easyjob.ErrInvalidCron):
		h.reschedulePage(w, r, http.StatusUnprocessableEntity, name, r.PostFormValue("cron"), err)
		return
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, fmt.Sprintf("%s %q failed: %v", op, name, err))
		return
	}
	http.Redirect(w, r, backTo(r, op, name), http.StatusSeeOther)
}

// errBadTime is a form's time that is neither RFC 3339 nor a duration.
var errBadTime = errors.New("want an RFC 3339 time (2026-11-26T10:00:00Z) or a duration ago (90m)")

// backfill runs the task for the fires from `from` to `to` (a time or a
// duration ago, by the store's clock; to empty for now).
func (h *site) backfill(ctx context.Context, name, from, to string) error {
	now, err := h.client.Now(ctx)
	if err != nil {
		return err
	}
	start, err := formTimeAgo("from", from, now)
	if err != nil {
		return err
	}
	end := now
	if strings.TrimSpace(to) != "" {
		if end, err = formTimeAgo("to", to, now); err != nil {
			return err
		}
	}
	_, err = h.client.Backfill(ctx, name, start, end)
	return err
}

// formTimeAgo reads a form's time: RFC 3339, or a duration before now.
func formTimeAgo(field, v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s %q: %w", field, v, errBadTime)
}

// listSearch is the search term of the task list the request came from
// (its Referer, same-origin by the dashboard's Referrer-Policy): the
// list's forms do not repeat it. "" when the request did not come from
// the list.
func listSearch(r *http.Request) string {
	u, err := url.Parse(r.Referer())
	if err != nil || u.Host != r.Host || !strings.HasSuffix(u.Path, "/tasks") {
		return ""
	}
	return strings.TrimSpace(u.Query().Get("q"))
}

// backTo is the page an action returns to: the task list with its query
// when the form was there, else the task's page; done names the action.
func backTo(r *http.Request, op, name string) string {
	if back, ok := r.PostForm["back"]; ok {
		v, _ := url.ParseQuery(strings.TrimPrefix(back[0], "?"))
		if !v.Has("q") {
			v.Set("q", listSearch(r))
		}
		q := listQuery(v.Get("q"), v.Get("show"), v.Get("after"), v.Get("before"))
		v = url.Values{"done": {op}, "task": {name}}
		if q != "" {
			return baseOf(r) + "/tasks?" + q + "&" + v.Encode()
		}
		return baseOf(r) + "/tasks?" + v.Encode()
	}
	return baseOf(r) + "/task?" + url.Values{"name": {name}, "done": {op}}.Encode()
}
