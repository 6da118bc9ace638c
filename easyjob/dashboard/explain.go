package dashboard

import (
	"net/http"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// The task page's "Why?" panel and the API's explain route: when a task
// fires next, and what became of the fire at a time (easyjob.Client.Explain).

// whyAt reads the time an operator asks about: an RFC 3339 time, or a
// duration back from now ("90m"); ok is false for anything else.
func whyAt(s string, now time.Time) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// taskExplain explains the fire at why (the page's ?why=) for the task
// page; the error string says what was wrong with the question or what
// kind of failure kept the answer from being read.
func (h *site) taskExplain(r *http.Request, name, why string, now time.Time) (*easyjob.Explanation, string) {
	at, ok := whyAt(why, now)
	if !ok {
		return nil, "“" + why + "” is neither a time (2026-11-26T10:00:00Z) nor a duration ago (90m)"
	}
	x, err := h.client.Explain(r.Context(), name, at)
	if err != nil {
		h.opts.Logger.Error("easyjob dashboard: read failed", "path", r.URL.Path, "err", err)
		return nil, failureKind(err)
	}
	return &x, ""
}

// explain answers when the task fires next and, with ?at= (an RFC 3339
// time), what became of the fire at that time.
func (a *API) explain(w http.ResponseWriter, r *http.Request) error {
	at, err := timeParam(r.URL.Query(), "at")
	if err != nil {
		return err
	}
	x, err := a.client.Explain(r.Context(), r.PathValue("name"), at)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}
