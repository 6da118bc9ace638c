package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository"
)

// Alerts: a page of the dashboard (the group's runtime rules, with forms
// to add and remove them behind CanAct, and its recent alerts) and the
// API's routes (easyjob.Client: AlertRules, PutAlertRule,
// RemoveAlertRule, AlertHistory).

// alertsPageSize is how many recent alerts the page lists.
const alertsPageSize = 50

// alertsData is what the alerts page shows.
type alertsData struct {
	Rules  []alert.StoredRule
	Alerts []alert.Record
	Kinds  []repository.AlertKind
}

// alertsPage lists the rules and the recent alerts.
func (h *site) alertsPage(w http.ResponseWriter, r *http.Request) {
	s, err := h.snapshot(r.Context())
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	d, err := cached(r.Context(), h.cache, "alerts", func(ctx context.Context) (alertsData, error) {
		rules, err := h.client.AlertRules(ctx)
		if err != nil {
			return alertsData{}, err
		}
		for i := range rules {
			if rules[i].WebhookURL != "" {
				rules[i].WebhookURL = alert.RedactURL(rules[i].WebhookURL) // its path may be a token
			}
		}
		xs, err := h.client.AlertHistory(ctx, repository.AlertFilter{Limit: alertsPageSize})
		return alertsData{Rules: rules, Alerts: xs, Kinds: repository.AlertKinds}, err
	})
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "alerts", page{Title: "Alerts", Now: s.now(), Data: d})
}

// alertsAction adds (op add) or removes (op remove) a runtime rule from
// the page's forms, then answers 303 See Other to the page.
func (h *site) alertsAction(w http.ResponseWriter, r *http.Request) {
	if !h.canAct(r) {
		h.fail(w, r, http.StatusForbidden, "This dashboard is read-only for you: actions are not allowed.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, http.StatusBadRequest, "unreadable form: "+err.Error())
		return
	}
	if err := checkCSRF(r); err != nil {
		h.fail(w, r, http.StatusForbidden, "Refused: "+err.Error())
		return
	}
	ctx := easyjob.WithActor(r.Context(), h.actor(r))
	name := strings.TrimSpace(r.PostFormValue("name"))
	var err error
	switch op := r.PostFormValue("op"); op {
	case "add":
		rule := alert.StoredRule{
			Name: name, Task: strings.TrimSpace(r.PostFormValue("task")), Kind: alert.Kind(r.PostFormValue("kind")),
			AfterText: strings.TrimSpace(r.PostFormValue("after")), WebhookURL: strings.TrimSpace(r.PostFormValue("webhook_url")),
			WebhookSecret: r.PostFormValue("webhook_secret"),
		}
		if c := strings.TrimSpace(r.PostFormValue("count")); c != "" {
			if _, serr := fmt.Sscan(c, &rule.Count); serr != nil {
				err = fmt.Errorf("%w %q: count %q: want a number", alert.ErrInvalidRule, name, c)
			}
		}
		if err == nil {
			_, err = h.client.PutAlertRule(ctx, rule)
		}
	case "remove":
		err = h.client.RemoveAlertRule(ctx, name)
	default:
		h.fail(w, r, http.StatusBadRequest, fmt.Sprintf("unknown action %q", op))
		return
	}
	h.cache.clear()
	switch {
	case errors.Is(err, alert.ErrInvalidRule):
		h.fail(w, r, http.StatusUnprocessableEntity, "Not added: "+err.Error())
		return
	case errors.Is(err, alert.ErrRuleNotFound):
		h.fail(w, r, http.StatusNotFound, fmt.Sprintf("No alert rule %q (removed already?)", name))
		return
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, "The alert rule was not changed: "+err.Error())
		return
	}
	http.Redirect(w, r, frameOf(r).base+"/alerts", http.StatusSeeOther)
}

// alertRuleList is the group's runtime rules, by name.
type alertRuleList struct {
	Rules []alert.StoredRule `json:"rules"`
}

// alertList is a page of the group's alerts, newest first.
type alertList struct {
	Alerts []alert.Record `json:"alerts"`
}

// alertRuleJSON is a rule as PUT /alerts/rules/{name} takes it.
type alertRuleJSON struct {
	Name          string     `json:"name,omitempty"`
	Task          string     `json:"task,omitempty"`
	Kind          alert.Kind `json:"kind"`
	Count         int        `json:"count,omitempty"`
	After         string     `json:"after,omitempty"`
	WebhookURL    string     `json:"webhook_url,omitempty"`
	WebhookSecret string     `json:"webhook_secret,omitempty"`
}

// listAlertRules answers the group's runtime rules.
func (a *API) listAlertRules(w http.ResponseWriter, r *http.Request) error {
	rs, err := a.client.AlertRules(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, alertRuleList{Rules: nonNilSlice(rs)})
	return nil
}

// putAlertRule adds or replaces a runtime rule (the name is the path's).
func (a *API) putAlertRule(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	body, err := readBody(w, r, maxBody)
	if err != nil {
		return err
	}
	var in alertRuleJSON
	if err := decodeStrict(body, &in); err != nil {
		return err
	}
	if in.Name != "" && in.Name != name {
		return apiErr(http.StatusBadRequest, codeRequest, fmt.Sprintf("the body names %q, the path %q", in.Name, name))
	}
	out, err := a.client.PutAlertRule(a.ctx(r), alert.StoredRule{
		Name: name, Task: in.Task, Kind: in.Kind, Count: in.Count, AfterText: in.After,
		WebhookURL: in.WebhookURL, WebhookSecret: in.WebhookSecret,
	})
	if err != nil {
		return err
	}
	a.wrote()
	writeJSON(w, http.StatusOK, out)
	return nil
}

// removeAlertRule deletes a runtime rule and answers its name.
func (a *API) removeAlertRule(w http.ResponseWriter, r *http.Request) error {
	return a.removeNamed(w, r, a.client.RemoveAlertRule)
}

// listAlerts answers a page of the group's alerts, newest first
// (?open=true: only those open or not delivered yet; ?limit, ?before_id).
func (a *API) listAlerts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := intParam(q, "limit", 50, 1, maxLimit)
	if err != nil {
		return err
	}
	before, err := idParam(q, "before_id")
	if err != nil {
		return err
	}
	open, err := boolParam(q, "open")
	if err != nil {
		return err
	}
	xs, err := a.client.AlertHistory(r.Context(), repository.AlertFilter{Live: open, Limit: limit, BeforeID: before})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, alertList{Alerts: nonNilSlice(xs)})
	return nil
}

// nonNilSlice makes a nil slice empty, so JSON shows [] rather than null.
func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
