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
var pageNames = []string{"overview", "tasks", "task", "nodes", "audit", "calendars", "forecast", "reschedule", "schedule", "error"}

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
	Base    string // the mount point, "" at the root
	Nav     string // the page, for the navigation bar
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
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.Base, p.Nav, p.Group = baseOf(r), name, h.client.Group()
	if p.Refresh == 0 && name != "error" && name != "reschedule" && name != "schedule" && name != "forecast" {
		p.Refresh = h.opts.Refresh.Milliseconds()
	}
	p.CanAct = h.canAct(r)
	if p.CanAct {
		p.CSRF = csrfToken(w, r)
	}
	tmpl, part := h.pages.byName[name], "layout.html"
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
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
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

type baseKey struct{}

func withBase(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, baseKey{}, base)
}

// baseOf returns the mount point of the handler serving r.
func baseOf(r *http.Request) string {
	b, _ := r.Context().Value(baseKey{}).(string)
	return b
}
