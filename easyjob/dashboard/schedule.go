package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// The schedule forms: a new schedule (Client.Create), the edit of one
// (Client.Update), and the page a refused trigger with args returns to.
// A refused form comes back filled in, with the library's message.

// maxFormBody bounds the body of a schedule form (its args included).
const maxFormBody = maxBody

// scheduleForm is the schedule page: the form's fields as typed, and what
// the page shows around them.
type scheduleForm struct {
	Mode string // "new", "edit" or "trigger"
	// The fields, as the user typed them.
	Name, Handler, Cron, At, Args, Timezone                string
	Start, End                                             string // the window, as At
	Calendar, Jitter, PauseAfter                           string
	Spread, Overlap, OverlapGrace, OverlapLimit, MaxFires  string
	Overlaps                                               []string
	Timeout, Retries, Backoff, Misfire, Threshold, CatchUp string
	Paused, AllowUnknown, SkipInterrupted, EveryFrom       bool
	Revision                                               int64 // edit: the revision being edited
	Handlers                                               []easyjob.HandlerInfo
	Misfires                                               []string
	Error                                                  string // why the library refused it
}

// overlapChoices are the overlap policy's choices ("" for the default).
var overlapChoices = []string{"", string(repository.OverlapSkip), string(repository.OverlapBufferOne),
	string(repository.OverlapBufferAll), string(repository.OverlapCancel), string(repository.OverlapTerminate),
	string(repository.OverlapAllowAll)}

// misfireChoices are the misfire policy's choices ("" for the default).
var misfireChoices = []string{"", string(repository.MisfireFireOnceNow), string(repository.MisfireSkip), string(repository.MisfireCatchUp)}

// formOf reads the schedule form of a parsed POST.
func formOf(r *http.Request, mode string) scheduleForm {
	v := r.PostFormValue
	on := func(k string) bool { return v(k) != "" }
	return scheduleForm{
		Mode: mode, Name: v("name"), Handler: v("handler"), Cron: v("cron"), At: v("at"), Args: v("args"), Timezone: v("timezone"),
		Start: v("start"), End: v("end"), Calendar: v("calendar"), Jitter: v("jitter"), PauseAfter: v("pause_after"),
		Spread: v("spread"), Overlap: v("overlap"), OverlapGrace: v("overlap_grace"), OverlapLimit: v("overlap_limit"), MaxFires: v("max_fires"),
		Timeout: v("timeout"), Retries: v("max_retries"), Backoff: v("retry_backoff"),
		Misfire: v("misfire"), Threshold: v("misfire_threshold"), CatchUp: v("catch_up"),
		Paused: on("paused"), AllowUnknown: on("allow_unknown"), SkipInterrupted: on("skip_interrupted"), EveryFrom: on("every_from_creation"),
	}
}

// formOfTask fills the edit form with the definition of t.
func formOfTask(t repository.Task) scheduleForm {
	o := t.Options
	f := scheduleForm{
		Mode: "edit", Name: t.Name, Handler: t.Handler, Cron: t.Cron, Args: compactJSON(json.RawMessage(t.Args)), Timezone: o.Timezone,
		Misfire: string(o.Misfire), SkipInterrupted: o.Recover == repository.RecoverSkip, EveryFrom: o.EveryFromCreation,
		Revision: t.Revision,
	}
	if o.Timeout > 0 {
		f.Timeout = o.Timeout.String()
	}
	if o.MaxRetries > 0 {
		f.Retries = strconv.Itoa(o.MaxRetries)
	}
	if o.RetryBackoff > 0 {
		f.Backoff = o.RetryBackoff.String()
	}
	if o.MisfireThreshold > 0 {
		f.Threshold = o.MisfireThreshold.String()
	}
	if o.CatchUpMax > 0 {
		f.CatchUp = strconv.Itoa(o.CatchUpMax)
	}
	f.Calendar = o.Calendar
	if o.PauseAfter > 0 {
		f.PauseAfter = strconv.Itoa(o.PauseAfter)
	}
	if o.Jitter > 0 {
		f.Jitter = o.Jitter.String()
	}
	if o.Spread > 0 {
		f.Spread = o.Spread.String()
	}
	f.Overlap = string(o.Overlap)
	if o.OverlapGrace > 0 {
		f.OverlapGrace = o.OverlapGrace.String()
	}
	if o.MaxFires > 0 {
		f.MaxFires = strconv.FormatInt(o.MaxFires, 10)
	}
	if o.OverlapLimit > 0 {
		f.OverlapLimit = strconv.Itoa(o.OverlapLimit)
	}
	if !o.Start.IsZero() {
		f.Start = o.Start.Format(time.RFC3339)
	}
	if !o.End.IsZero() {
		f.End = o.End.Format(time.RFC3339)
	}
	return f
}

// request turns the form into the API's schedule, checking what only the
// form can get wrong (a number, a duration, a time); the library checks
// the rest.
func (f scheduleForm) request() (scheduleJSON, error) {
	in := scheduleJSON{
		Name: f.Name, Handler: strings.TrimSpace(f.Handler), Cron: strings.TrimSpace(f.Cron), Timezone: strings.TrimSpace(f.Timezone),
		Paused: f.Paused, AllowUnknown: f.AllowUnknown,
	}
	in.SkipInterrupted, in.EveryFromCreation = f.SkipInterrupted, f.EveryFrom
	in.Calendar = strings.TrimSpace(f.Calendar)
	if a := strings.TrimSpace(f.Args); a != "" {
		in.Args = json.RawMessage(a)
	}
	if at := strings.TrimSpace(f.At); at != "" {
		t, err := parseAt(at, in.Timezone)
		if err != nil {
			return in, err
		}
		in.At = &t
	}
	for _, w := range []struct {
		v    string
		into **time.Time
	}{{f.Start, &in.Start}, {f.End, &in.End}} {
		if v := strings.TrimSpace(w.v); v != "" {
			t, err := parseAt(v, in.Timezone)
			if err != nil {
				return in, err
			}
			*w.into = &t
		}
	}
	var err error
	if in.Timeout, err = formDuration("timeout", f.Timeout); err != nil {
		return in, err
	}
	if in.Jitter, err = formDuration("jitter", f.Jitter); err != nil {
		return in, err
	}
	if in.Spread, err = formDuration("spread", f.Spread); err != nil {
		return in, err
	}
	if in.OverlapGrace, err = formDuration("overlap grace", f.OverlapGrace); err != nil {
		return in, err
	}
	maxFires, err := formInt("max fires", f.MaxFires)
	if err != nil {
		return in, err
	}
	if in.OverlapLimit, err = formInt("overlap limit", f.OverlapLimit); err != nil {
		return in, err
	}
	in.Overlap, in.MaxFires = f.Overlap, int64(maxFires)
	if in.RetryBackoff, err = formDuration("retry backoff", f.Backoff); err != nil {
		return in, err
	}
	if in.PauseAfter, err = formInt("pause after", f.PauseAfter); err != nil {
		return in, err
	}
	if in.MaxRetries, err = formInt("retries", f.Retries); err != nil {
		return in, err
	}
	if f.Misfire != "" || strings.TrimSpace(f.Threshold) != "" || strings.TrimSpace(f.CatchUp) != "" {
		m := &misfireJSON{Policy: f.Misfire}
		if m.Threshold, err = formDuration("misfire threshold", f.Threshold); err != nil {
			return in, err
		}
		if m.CatchUp, err = formInt("catch up", f.CatchUp); err != nil {
			return in, err
		}
		in.Misfire = m
	}
	return in, nil
}

// parseAt reads a one-off time: as a datetime-local field sends it, in
// time zone tz (UTC when ""), or RFC 3339.
func parseAt(s, tz string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	loc := time.UTC
	if tz != "" {
		var err error
		if loc, err = time.LoadLocation(tz); err != nil {
			return time.Time{}, fmt.Errorf("%w: time zone %q: %w", easyjob.ErrInvalidOption, tz, err)
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: one-off time %q: want YYYY-MM-DDTHH:MM[:SS] or RFC 3339", easyjob.ErrInvalidCron, s)
}

// formDuration reads a duration field ("" is 0).
func formDuration(what, s string) (duration, error) {
	if s = strings.TrimSpace(s); s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q: want a duration such as 30s, 5m or 1h30m", easyjob.ErrInvalidOption, what, s)
	}
	return duration(d), nil
}

// formInt reads an integer field ("" is 0).
func formInt(what, s string) (int, error) {
	if s = strings.TrimSpace(s); s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q: want a whole number", easyjob.ErrInvalidOption, what, s)
	}
	return n, nil
}

// newSchedule shows the empty form.
func (h *site) newSchedule(w http.ResponseWriter, r *http.Request) {
	if !h.canAct(r) {
		h.fail(w, r, http.StatusForbidden, "This dashboard is read-only for you: creating schedules is not allowed.")
		return
	}
	f := scheduleForm{Mode: "new", Handler: r.URL.Query().Get("handler")}
	h.schedulePage(w, r, http.StatusOK, f)
}

// createSchedule creates the form's schedule and shows its task page, or
// the form again with the library's message.
func (h *site) createSchedule(w http.ResponseWriter, r *http.Request) {
	if !h.formPost(w, r, "creating schedules") {
		return
	}
	f := formOf(r, "new")
	in, err := f.request()
	var s easyjob.Schedule
	if err == nil {
		s, err = in.schedule()
	}
	if err == nil {
		_, err = h.client.Create(easyjob.WithActor(r.Context(), h.actor(r)), s, in.createOptions()...)
		h.cache.clear()
	}
	if err != nil {
		h.formFailed(w, r, f, err)
		return
	}
	http.Redirect(w, r, baseOf(r)+"/task?"+url.Values{"name": {f.Name}, "done": {"create"}}.Encode(), http.StatusSeeOther)
}

// editSchedule shows the form filled with a schedule's definition.
func (h *site) editSchedule(w http.ResponseWriter, r *http.Request) {
	if !h.canAct(r) {
		h.fail(w, r, http.StatusForbidden, "This dashboard is read-only for you: editing schedules is not allowed.")
		return
	}
	name := r.URL.Query().Get("name")
	t, err := h.client.Control().Task(r.Context(), h.client.Group(), name)
	if err != nil {
		h.readFailed(w, r, name, err)
		return
	}
	if !t.Dynamic {
		h.fail(w, r, http.StatusConflict, fmt.Sprintf("%q is a task registered in code: its definition belongs to the code (Reschedule overrides its cron).", name))
		return
	}
	h.schedulePage(w, r, http.StatusOK, formOfTask(t))
}

// updateSchedule replaces a schedule's definition with the form's.
func (h *site) updateSchedule(w http.ResponseWriter, r *http.Request) {
	if !h.formPost(w, r, "editing schedules") {
		return
	}
	f := formOf(r, "edit")
	if t, err := h.client.Control().Task(r.Context(), h.client.Group(), f.Name); err == nil {
		f.Revision = t.Revision
	}
	in, err := f.request()
	var s easyjob.Schedule
	if err == nil {
		s, err = in.schedule()
	}
	if err == nil {
		_, err = h.client.Update(easyjob.WithActor(r.Context(), h.actor(r)), s, in.createOptions()...)
		h.cache.clear()
	}
	if err != nil {
		h.formFailed(w, r, f, err)
		return
	}
	http.Redirect(w, r, baseOf(r)+"/task?"+url.Values{"name": {f.Name}, "done": {"update"}}.Encode(), http.StatusSeeOther)
}

// formPost checks a form's POST (may act, CSRF) and parses it, answering
// the request itself when it fails.
func (h *site) formPost(w http.ResponseWriter, r *http.Request, what string) bool {
	if !h.canAct(r) {
		h.fail(w, r, http.StatusForbidden, "This dashboard is read-only for you: "+what+" is not allowed.")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, http.StatusBadRequest, "unreadable form: "+err.Error())
		return false
	}
	if err := checkCSRF(r); err != nil {
		h.fail(w, r, http.StatusForbidden, "Refused: "+err.Error())
		return false
	}
	return true
}

// formFailed shows form f again with why err refused it: the library's
// message for a refusal, only the kind of failure for a store error.
func (h *site) formFailed(w http.ResponseWriter, r *http.Request, f scheduleForm, err error) {
	status, _, ok := classify(err)
	f.Error = err.Error()
	if !ok {
		h.opts.Logger.Error("easyjob dashboard: write failed", "path", r.URL.Path, "err", err)
		status, f.Error = http.StatusServiceUnavailable, "Cannot write the schedule: "+failureKind(err)+". The service's log has the details."
	}
	h.schedulePage(w, r, status, f)
}

// schedulePage renders form f with status.
func (h *site) schedulePage(w http.ResponseWriter, r *http.Request, status int, f scheduleForm) {
	now, err := h.client.Now(r.Context())
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	f.Misfires, f.Overlaps = misfireChoices, overlapChoices
	if f.Mode != "trigger" {
		f.Handlers = h.knownHandlers(r)
	}
	title := "New schedule"
	switch f.Mode {
	case "edit":
		title = "Edit " + f.Name
	case "trigger":
		title = "Trigger " + f.Name
	}
	h.render(w, r, status, "schedule", page{Title: title, Now: now, Data: f})
}

// knownHandlers lists the handler kinds the group's nodes published, for
// the form to offer (none when the read fails: the field takes any kind).
func (h *site) knownHandlers(r *http.Request) []easyjob.HandlerInfo {
	hs, err := cached(r.Context(), h.cache, "handlers", func(ctx context.Context) ([]easyjob.HandlerInfo, error) {
		return h.client.Handlers(ctx)
	})
	if err != nil {
		h.opts.Logger.Error("easyjob dashboard: read failed", "path", r.URL.Path, "err", err)
		return nil
	}
	return hs
}

// triggerFailed shows the trigger-with-args form again with why the
// library refused the args.
func (h *site) triggerFailed(w http.ResponseWriter, r *http.Request, name string, err error) {
	status, _, _ := classify(err)
	h.schedulePage(w, r, status, scheduleForm{Mode: "trigger", Name: name, Args: r.PostFormValue("args"), Error: err.Error()})
}

// compactJSON is JSON text without insignificant space, for a cell.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
