package dashboard

import (
	"bytes"
	"context"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// pageNames are the templates of templates/ that are whole pages; each
// defines "static" (drawn once) and "live" (redrawn by each refresh).
var pageNames = []string{"overview", "tasks", "task", "run", "nodes", "audit", "calendars", "alerts", "forecast", "reschedule", "schedule", "error", "groups", "dag"}

// pages holds one template set per page, each with the shared layout.
type pages struct{ byName map[string]*template.Template }

func loadPages() *pages {
	common := template.Must(template.New("layout.html").Funcs(funcs).
		ParseFS(templateFS, "templates/layout.html", "templates/parts.html"))
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range pageNames {
		t := template.Must(common.Clone())
		p.byName[name] = template.Must(t.ParseFS(templateFS, "templates/"+name+".html"))
	}
	return p
}

// page is what every template gets: the frame, and Data for the page.
type page struct {
	Base    string       // the mount point of the group's pages, "" at the root
	Root    string       // the mount point of the handler
	Switch  *groupSwitch // the group switcher, nil when one group is served
	Nav     string       // the page, for the navigation bar
	Title   string
	Group   string
	Now     time.Time // store clock
	CanAct  bool
	CSRF    string
	Refresh int64 // milliseconds between refreshes, 0 for none
	Flash   string
	Error   string // the database could not be read
	Data    any
}

// partialHeader marks the refresh requests of live.js: only the page's
// "live" part is sent.
const partialHeader = "X-Easyjob-Partial"

// render writes page name with status; a refresh request gets only its
// live part. The page is rendered in full before anything is written.
func (h *site) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	f := frameOf(r)
	p.Base, p.Root, p.Nav, p.Group = f.base, f.root, name, h.client.Group()
	if p.Refresh == 0 && name != "error" && name != "reschedule" && name != "schedule" && name != "forecast" {
		p.Refresh = h.opts.Refresh.Milliseconds()
	}
	p.CanAct = h.canAct(r)
	if p.CanAct {
		p.CSRF = csrfToken(w, r)
	}
	if r.Header.Get(partialHeader) != "1" {
		p.Switch = h.hub.switcher(r, name)
	}
	h.pages.write(w, r, status, name, p)
}

// write writes page name with status; a refresh request gets only its
// live part. The page is rendered in full before anything is written.
func (ps *pages) write(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	tmpl, part := ps.byName[name], "layout.html"
	if r.Header.Get(partialHeader) == "1" {
		part = "livepart"
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, part, p); err != nil {
		http.Error(w, "easyjob dashboard: render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail renders the error page.
func (h *site) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.render(w, r, status, "error", page{Title: http.StatusText(status), Error: msg})
}

// assetHandler serves the embedded style sheet and script.
func assetHandler() http.Handler {
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix("/assets/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		files.ServeHTTP(w, r)
	})
}

// frame is where a request is served: the mount point of its group's
// pages (base: "" or "/prefix" at the root, "/prefix/g/name" for a group
// of Options.Groups), of the handler (root), and its group ("" on the
// pages of no group).
type frame struct{ base, root, group string }

type frameKey struct{}

func withFrame(ctx context.Context, f frame) context.Context {
	return context.WithValue(ctx, frameKey{}, f)
}

// frameOf returns the frame of r.
func frameOf(r *http.Request) frame {
	f, _ := r.Context().Value(frameKey{}).(frame)
	return f
}

// baseOf returns the mount point of the pages of r's group.
func baseOf(r *http.Request) string { return frameOf(r).base }

// RequestGroup returns the group a request to the dashboard (or its JSON
// API) reads or acts on: what Options.CanAct and Options.Actor may
// consult: the client's group outside /g/{group}/, "" outside the
// handler and on the all-groups overview.
func RequestGroup(r *http.Request) string { return frameOf(r).group }
