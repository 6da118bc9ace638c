package dashboard

import (
	"context"
	"fmt"
	"net/http"

	"github.com/easyjob-go/easyjob/easyjob"
)

// The exclusion calendars of the group: a page of the dashboard, and the
// API's routes (easyjob.Client: SetCalendar, Calendars, RemoveCalendar).

// calendars is the page listing the group's calendars.
func (h *site) calendars(w http.ResponseWriter, r *http.Request) {
	s, err := h.snapshot(r.Context())
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	cs, err := cached(r.Context(), h.cache, "calendars", func(ctx context.Context) ([]easyjob.ExclusionCalendar, error) {
		return h.client.Calendars(ctx)
	})
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "calendars", page{Title: "Calendars", Now: s.now(), Data: cs})
}

// calendarList is the group's calendars, by name.
type calendarList struct {
	Calendars []easyjob.ExclusionCalendar `json:"calendars"`
}

// listCalendars answers the group's calendars.
func (a *API) listCalendars(w http.ResponseWriter, r *http.Request) error {
	cs, err := a.client.Calendars(r.Context())
	if err != nil {
		return err
	}
	if cs == nil {
		cs = []easyjob.ExclusionCalendar{}
	}
	writeJSON(w, http.StatusOK, calendarList{Calendars: cs})
	return nil
}

// putCalendar creates or replaces a calendar from its JSON (the name is
// the path's).
func (a *API) putCalendar(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	body, err := readBody(w, r, maxBody)
	if err != nil {
		return err
	}
	var in easyjob.ExclusionCalendar
	if err := decodeStrict(body, &in); err != nil {
		return err
	}
	if in.Name != "" && in.Name != name {
		return apiErr(http.StatusBadRequest, codeRequest, fmt.Sprintf("the body names %q, the path %q", in.Name, name))
	}
	in.Name = name
	out, err := a.client.SetCalendar(a.ctx(r), in)
	if err != nil {
		return err
	}
	a.wrote()
	writeJSON(w, http.StatusOK, out)
	return nil
}

// removeCalendar deletes a calendar and answers its name.
func (a *API) removeCalendar(w http.ResponseWriter, r *http.Request) error {
	return a.removeNamed(w, r, a.client.RemoveCalendar)
}

// removeNamed deletes what the path names with remove (a calendar, an
// alert rule) and answers its name.
func (a *API) removeNamed(w http.ResponseWriter, r *http.Request, remove func(context.Context, string) error) error {
	name := r.PathValue("name")
	if err := remove(a.ctx(r), name); err != nil {
		return err
	}
	a.wrote()
	writeJSON(w, http.StatusOK, struct {
		Removed string `json:"removed"`
	}{name})
	return nil
}
