package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// The groups of one database side by side: the routes of a group under
// /g/{group}/, the switcher in every page's header, the all-groups
// overview (/groups) and its JSON (/api/v1/groups).

const (
	// FireWindow is how far back the all-groups overview counts fires.
	FireWindow = time.Minute
	// switchEntries bounds the groups the switcher lists; /groups lists
	// them all.
	switchEntries = 50
)

// multi reports whether the handler serves more than the client's group.
func (h *Handler) multi() bool { return h.opts.AllGroups || len(h.opts.Groups) > 0 }

// GroupSummary is one row of the all-groups overview.
type GroupSummary struct {
	Group   string `json:"group"`
	Tasks   int    `json:"tasks"`
	Running int    `json:"running"` // claimed by a node: queued for its fire or running
	Paused  int    `json:"paused"`
	Failing int    `json:"failing"` // last run failed or timed out
	Nodes   int    `json:"nodes"`
	Live    int    `json:"live_nodes"`
	// Fires counts the runs started in the last FireWindow, Failures the
	// unsuccessful ones of the last FailureWindow (the newest at
	// LastFailure); Capped: at least that many (see
	// repository.GroupRunSample).
	Fires          int       `json:"fires_last_minute"`
	FiresCapped    bool      `json:"fires_capped,omitempty"`
	Failures       int       `json:"failures_last_hour"`
	FailuresCapped bool      `json:"failures_capped,omitempty"`
	LastFailure    time.Time `json:"last_failure,omitzero"`
}

// GroupList is what /groups and /api/v1/groups show.
type GroupList struct {
	Now    time.Time      `json:"now"`
	Home   string         `json:"default_group"` // the client's group, served at the root
	Groups []GroupSummary `json:"groups"`
}

// groups reads the groups served and their counts, once per refresh
// interval for everyone: the client's group, and those of Options.Groups
// or (AllGroups) every group the database holds.
func (h *Handler) groups(ctx context.Context) (GroupList, error) {
	return cached(ctx, h.cache, "groups", func(ctx context.Context) (GroupList, error) {
		var names []string
		if !h.opts.AllGroups {
			names = append([]string{}, h.opts.Groups...) // not nil: these only
		}
		v, err := ReadGroups(ctx, h.client, names)
		return v.withHome(), err
	})
}

// ReadGroups reads c's group and the named ones (names nil: every group
// the database holds, up to repository.GroupLimit) with their counts, in
// two queries: what the all-groups overview and `easyjob groups` show.
func ReadGroups(ctx context.Context, c *easyjob.Client, names []string) (GroupList, error) {
	store, home := c.Control(), c.Group()
	now, err := store.Now(ctx)
	if err != nil {
		return GroupList{}, fmt.Errorf("easyjob: read the groups: %w", err)
	}
	q := repository.GroupQuery{
		Limit: repository.GroupLimit, LiveWithin: c.LiveAfter(),
		FiresWithin: FireWindow, FailuresWithin: FailureWindow,
	}
	if names != nil {
		q.Names = append([]string{home}, names...)
	}
	gs, err := store.GroupSummaries(ctx, q)
	if err != nil {
		return GroupList{}, fmt.Errorf("easyjob: read the groups: %w", err)
	}
	v := GroupList{Now: now, Home: home, Groups: make([]GroupSummary, 0, len(gs)+1)}
	for _, g := range gs {
		v.Groups = append(v.Groups, GroupSummary{
			Group: g.Group, Tasks: g.Tasks, Running: g.Running, Paused: g.Paused, Failing: g.Failing,
			Nodes: g.Nodes, Live: g.LiveNodes, Fires: g.Fires, FiresCapped: g.FiresCapped,
			Failures: g.Failures, FailuresCapped: g.FailuresCapped, LastFailure: g.LastFailure,
		})
	}
	return v, nil
}

// withHome is v with the client's group listed, served even while it
// holds nothing.
func (v GroupList) withHome() GroupList {
	if !slices.ContainsFunc(v.Groups, func(g GroupSummary) bool { return g.Group == v.Home }) {
		i, _ := slices.BinarySearchFunc(v.Groups, v.Home, func(g GroupSummary, name string) int { return strings.Compare(g.Group, name) })
		v.Groups = slices.Insert(slices.Clone(v.Groups), i, GroupSummary{Group: v.Home})
	}
	return v
}

// site returns the dashboard of group name, nil when the handler does not
// serve it.
func (h *Handler) site(ctx context.Context, name string) (*site, error) {
	if name == h.client.Group() {
		return h.home, nil
	}
	switch {
	case !h.multi(), !h.opts.AllGroups && !slices.Contains(h.opts.Groups, name):
		return nil, nil
	case h.opts.AllGroups:
		v, err := h.groups(ctx)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(v.Groups, func(g GroupSummary) bool { return g.Group == name }) {
			return nil, nil
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sites[name]
	if s == nil {
		s = h.newSite(h.client.WithGroup(name))
		h.sites[name] = s
	}
	return s, nil
}

// serveGroup serves /g/{group}/...: the pages and API of that group, with
// their links under /g/{group}/.
func (h *Handler) serveGroup(w http.ResponseWriter, r *http.Request, base string) {
	seg, tail, found := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/g/"), "/")
	name, err := url.PathUnescape(seg)
	isAPI := strings.HasPrefix("/"+tail, apiPrefix+"/")
	if err != nil || name == "" {
		h.noGroup(w, r, isAPI, "no group named "+seg)
		return
	}
	if !found { // "/g/name": the group's overview is "/g/name/"
		http.Redirect(w, r, base+"/g/"+url.PathEscape(name)+"/", http.StatusMovedPermanently)
		return
	}
	s, err := h.site(r.Context(), name)
	if err != nil {
		h.home.unavailable(w, r, err)
		return
	}
	if s == nil {
		h.noGroup(w, r, isAPI, fmt.Sprintf("this dashboard serves no group named %q (see /groups)", name))
		return
	}
	r2 := *r
	u := *r.URL
	u.Path, u.RawPath = "/"+tail, ""
	if p, err := url.PathUnescape(tail); err == nil {
		u.Path = "/" + p
		if p != tail {
			u.RawPath = "/" + tail
		}
	}
	r2.URL = &u
	f := frameOf(r)
	f.base = base + "/g/" + url.PathEscape(name)
	s.serve(w, r2.WithContext(withFrame(r.Context(), f)))
}

// noGroup answers a path of a group the handler does not serve: 404, in
// JSON under the API.
func (h *Handler) noGroup(w http.ResponseWriter, r *http.Request, isAPI bool, msg string) {
	if isAPI {
		h.home.api.fail(w, r, apiErr(http.StatusNotFound, codeNotFound, msg))
		return
	}
	h.home.fail(w, r, http.StatusNotFound, msg)
}

// groupsPage is /groups: one row per group.
func (h *Handler) groupsPage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	v, err := h.groups(r.Context())
	if err != nil {
		h.home.unavailable(w, r, err)
		return
	}
	f := frameOf(r)
	f.group = ""
	r = r.WithContext(withFrame(r.Context(), f))
	p := page{Base: f.root, Root: f.root, Nav: "groups", Title: "All groups", Now: v.Now, Data: v,
		Refresh: h.opts.Refresh.Milliseconds(), CanAct: !h.opts.ReadOnly}
	if r.Header.Get(partialHeader) != "1" {
		p.Switch = h.switcher(r, "groups")
	}
	h.pages.write(w, r, http.StatusOK, "groups", p)
}

// groupsAPI is GET /api/v1/groups.
func (h *Handler) groupsAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		h.home.api.fail(w, r, apiErr(http.StatusMethodNotAllowed, codeMethod, r.Method+" is not allowed here (allowed: GET)"))
		return
	}
	v, err := h.groups(r.Context())
	if err != nil {
		h.home.api.fail(w, r, err)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	writeJSON(w, http.StatusOK, v)
}

// groupSwitch is the group switcher of a page's header.
type groupSwitch struct {
	Current string
	Groups  []groupLink
	More    int    // groups left out of the list (all on /groups)
	All     string // the link to /groups
}

type groupLink struct {
	Name, Href string
	On         bool
}

// switchPaths are the pages of a group the switcher keeps: switching on
// the task list goes to the other group's task list; from any other page,
// to its overview.
var switchPaths = map[string]string{
	"tasks": "tasks", "task": "tasks", "nodes": "nodes", "audit": "audit", "calendars": "calendars", "forecast": "forecast",
}

// switcher is the switcher of a page of r, nil when the handler serves
// one group.
func (h *Handler) switcher(r *http.Request, page string) *groupSwitch {
	if !h.multi() {
		return nil
	}
	f := frameOf(r)
	sw := &groupSwitch{Current: f.group, All: f.root + "/groups"}
	v, err := h.groups(r.Context())
	if err != nil {
		h.opts.Logger.Error("easyjob dashboard: read the groups", "err", err)
		return sw
	}
	for _, g := range v.Groups {
		if len(sw.Groups) >= switchEntries && g.Group != f.group {
			sw.More++
			continue
		}
		sw.Groups = append(sw.Groups, groupLink{
			Name: g.Group, On: g.Group == f.group,
			Href: f.root + "/g/" + url.PathEscape(g.Group) + "/" + switchPaths[page],
		})
	}
	return sw
}
