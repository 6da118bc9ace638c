package dashboard

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// Options configure a dashboard. The zero value is a dashboard with
// actions, refreshing every 2 seconds, showing the last 5 minutes of fires.
type Options struct {
	// ReadOnly hides the actions (trigger, pause, resume, reschedule,
	// the schedule forms) and refuses them, and every write of the JSON
	// API, with 403 Forbidden.
	ReadOnly bool
	// CanAct, when set, decides per request whether its user may act: the
	// actions are shown and accepted (the JSON API's writes too) only
	// when it returns true (and ReadOnly is false). Authentication is the embedder's: wrap the
	// handler in its middleware, which may leave a role in the request's
	// context for CanAct to read, and RequestGroup(r) names the group
	// the request acts on. Nil lets every request act.
	CanAct func(r *http.Request) bool
	// Actor names the user of an action request, for the audit log (the
	// entry says via "dashboard", or "api" for the JSON API, from the
	// host of the request's RemoteAddr: behind a proxy, set it from the
	// proxy's header in the middleware that trusts it).
	// Default: the HTTP basic-auth user name when the request carries
	// one, else "anonymous". An embedder whose middleware authenticates
	// otherwise returns its user here. The name is recorded without
	// control characters and cut to 200 characters; "" is "anonymous".
	Actor func(r *http.Request) string
	// Refresh is how often an open page refreshes itself, and how long
	// the handler reuses what it read: any number of open pages cost the
	// database the queries of one. Default 2s.
	Refresh time.Duration
	// Window is the span of the timeline of recent fires. Default 5m.
	Window time.Duration
	// MaxRuns bounds the fires the timeline reads (the newest). Default 2000.
	MaxRuns int
	// Groups are more groups of the client's database to serve, each
	// under /g/{group}/ (its pages and JSON API), with a group switcher
	// on every page and the all-groups overview at /groups. The client's
	// own group stays at the root (and is at /g/{group}/ too).
	Groups []string
	// AllGroups serves every group the database holds (those with tasks
	// or node rows, read through the store once per Refresh) as Groups
	// does; Groups is then ignored.
	AllGroups bool
	// Logger receives the full error of a read that failed; the page says
	// only what kind of failure it was, never a user, database or host.
	// Default slog.Default().
	Logger *slog.Logger
}

// Handler serves the dashboard of the group of one easyjob.Client at its
// root and, when Options.Groups or Options.AllGroups says so, the
// dashboards of more groups of the same database under /g/{group}/ (every
// page, and the JSON API under /g/{group}/api/v1/), with a group switcher
// on every page and the all-groups overview at /groups (GET
// /api/v1/groups in JSON). Mount it under any prefix with
// http.StripPrefix; it finds the prefix from the request, so its links
// work wherever it is mounted. It is safe for concurrent use.
type Handler struct {
	client *easyjob.Client
	opts   Options
	pages  *pages
	home   *site  // the client's group, served at the root
	cache  *cache // the groups and their counts

	mu    sync.Mutex
	sites map[string]*site // by group, home included; made on first use
}

// site is the dashboard of one group: its pages, actions and JSON API.
type site struct {
	hub    *Handler
	client *easyjob.Client
	opts   Options
	cache  *cache
	mux    *http.ServeMux
	pages  *pages
	api    *API
}

// withDefaults fills in the defaults of o.
func (o Options) withDefaults() Options {
	if o.Refresh <= 0 {
		o.Refresh = 2 * time.Second
	}
	if o.Window <= 0 {
		o.Window = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxRuns <= 0 {
		o.MaxRuns = 2000
	}
	return o
}

// New returns the dashboard of c's group, its JSON API under /api/v1/
// included (see NewAPI), and of the groups Options.Groups or
// Options.AllGroups add. The handler does not close c.
func New(c *easyjob.Client, o Options) *Handler {
	o = o.withDefaults()
	h := &Handler{client: c, opts: o, pages: loadPages(), cache: newCache(o.Refresh), sites: map[string]*site{}}
	h.home = h.newSite(c)
	h.sites[c.Group()] = h.home
	return h
}

// newSite makes the dashboard of c's group.
func (h *Handler) newSite(c *easyjob.Client) *site {
	s := &site{hub: h, client: c, opts: h.opts, cache: newCache(h.opts.Refresh), mux: http.NewServeMux(), pages: h.pages}
	s.api = newAPI(c, h.opts, s.cache.clear)
	s.mux.HandleFunc("GET /{$}", s.overview)
	s.mux.HandleFunc("GET /tasks", s.tasks)
	s.mux.HandleFunc("GET /task", s.task)
	s.mux.HandleFunc("GET /run", s.run)
	s.mux.HandleFunc("GET /dag", s.dag)
	s.mux.HandleFunc("GET /nodes", s.nodes)
	s.mux.HandleFunc("GET /audit", s.audit)
	s.mux.HandleFunc("GET /calendars", s.calendars)
	s.mux.HandleFunc("GET /forecast", s.forecast)
	s.mux.HandleFunc("GET /alerts", s.alertsPage)
	s.mux.HandleFunc("POST /alerts", s.alertsAction)
	s.mux.HandleFunc("GET /reschedule", s.reschedulePreview)
	s.mux.HandleFunc("POST /action", s.action)
	s.mux.HandleFunc("GET /schedule/new", s.newSchedule)
	s.mux.HandleFunc("POST /schedule/new", s.createSchedule)
	s.mux.HandleFunc("GET /schedule/edit", s.editSchedule)
	s.mux.HandleFunc("POST /schedule/edit", s.updateSchedule)
	s.mux.Handle(apiPrefix+"/", s.api)
	s.mux.Handle("GET /assets/", assetHandler())
	return s
}

// ServeHTTP serves the dashboard's pages, assets and actions: /groups and
// /api/v1/groups, a group's under /g/{group}/, the client's group's
// everywhere else.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	base := mountPoint(r)
	r = rooted(r)
	hd := w.Header()
	hd.Set("Content-Security-Policy",
		"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	r = r.WithContext(withFrame(r.Context(), frame{base: base, root: base, group: h.client.Group()}))
	switch p := r.URL.Path; {
	case p == "/groups":
		h.groupsPage(w, r)
	case p == apiPrefix+"/groups":
		h.groupsAPI(w, r)
	case strings.HasPrefix(p, "/g/"):
		h.serveGroup(w, r, base)
	default:
		h.home.serve(w, r)
	}
}

// serve serves r, a path of the site's group.
func (h *site) serve(w http.ResponseWriter, r *http.Request) {
	f := frameOf(r)
	f.group = h.client.Group()
	h.mux.ServeHTTP(w, r.WithContext(withFrame(r.Context(), f)))
}

// clearCache forgets what every group's pages read.
func (h *Handler) clearCache() {
	h.cache.clear()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.sites {
		s.cache.clear()
	}
}

// rooted returns r with a path that starts with a slash (a handler
// mounted with StripPrefix("/x/") sees "tasks" for "/x/tasks").
func rooted(r *http.Request) *http.Request {
	if strings.HasPrefix(r.URL.Path, "/") {
		return r
	}
	r2 := *r
	u := *r.URL
	u.Path = "/" + u.Path
	if u.RawPath != "" {
		u.RawPath = "/" + u.RawPath
	}
	r2.URL = &u
	return &r2
}

// canAct reports whether r may run actions.
func (h *site) canAct(r *http.Request) bool {
	return !h.opts.ReadOnly && (h.opts.CanAct == nil || h.opts.CanAct(r))
}

// mountPoint returns the path the handler is mounted under ("" at the
// root, else "/prefix" with no trailing slash): the request's original
// path less the path the handler sees.
func mountPoint(r *http.Request) string {
	orig, _, _ := strings.Cut(r.RequestURI, "?")
	if i := strings.Index(orig, "://"); i >= 0 { // absolute-form request target
		if j := strings.IndexByte(orig[i+3:], '/'); j >= 0 {
			orig = orig[i+3+j:]
		}
	}
	seen := r.URL.EscapedPath()
	if !strings.HasSuffix(orig, seen) {
		return ""
	}
	base := strings.TrimRight(strings.TrimSuffix(orig, seen), "/")
	if base == "" || strings.ContainsAny(base, `\"'<>`) {
		return ""
	}
	// One leading slash: "//host" would make links and redirects leave
	// the site.
	return "/" + strings.TrimLeft(base, "/")
}
