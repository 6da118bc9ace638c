package dashboard

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/easyjob-go/easyjob/easyjob"
)

// The audit log: who acted (an action's actor, recorded by the client
// with the action), the /audit page, and a task's last entries on its page.

const (
	// anonymous is the actor of an action request that names no user.
	anonymous = "anonymous"
	// maxActorLen caps a recorded name or address, in runes: the log is
	// for people to read, and the name comes from a request.
	maxActorLen = 200
	// taskAuditEntries is how many entries the task page shows.
	taskAuditEntries = 10
)

// actor is who acts in r: Options.Actor's name (default the basic-auth
// user), via the dashboard, from the host part of the remote address.
func (h *site) actor(r *http.Request) easyjob.Actor {
	return requestActor(h.opts, r, "dashboard")
}

// requestActor is who acts in r by o, via the tool via.
func requestActor(o Options, r *http.Request, via string) easyjob.Actor {
	var name string
	if o.Actor != nil {
		name = o.Actor(r)
	} else if u, _, ok := r.BasicAuth(); ok {
		name = u
	}
	name = cleanActor(name)
	if name == "" {
		name = anonymous
	}
	from, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil { // no port: a test's or a proxy's address as is
		from = r.RemoteAddr
	}
	return easyjob.Actor{Name: name, Via: via, From: cleanActor(from)}
}

// cleanActor makes s fit for the log: valid UTF-8 on one line, without
// control characters (a name must not forge lines or terminal escapes in
// a CLI listing), trimmed, at most maxActorLen runes.
func cleanActor(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > maxActorLen {
		s = strings.TrimSpace(string(r[:maxActorLen]))
	}
	return s
}

// auditData is the audit page: one page of entries, newest first.
type auditData struct {
	Task          string // the filter; "" for every task
	Entries       []easyjob.AuditEntry
	Before, Older int64 // this page's bound and the next page's (0: none)
}

// audit serves the audit log, to anyone who may see the dashboard: it
// says who did what, which read-only users may know.
func (h *site) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s, err := h.snapshot(r.Context())
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	d := auditData{Task: q.Get("task")}
	if id, err := strconv.ParseInt(q.Get("before"), 10, 64); err == nil && id > 0 {
		d.Before = id
	}
	// One entry more than a page tells whether there is an older page.
	es, err := h.auditLog(r.Context(), easyjob.AuditFilter{Task: d.Task, BeforeID: d.Before, Limit: pageSize + 1})
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	if len(es) > pageSize {
		es = es[:pageSize]
		d.Older = es[pageSize-1].ID
	}
	d.Entries = es
	title := "Audit log"
	if d.Task != "" {
		title += " · " + d.Task
	}
	h.render(w, r, http.StatusOK, "audit", page{Title: title, Now: s.now(), Data: d})
}

// auditLog reads entries of the log, once per refresh interval for
// everyone (an action clears the cache, so its entry shows at once).
func (h *site) auditLog(ctx context.Context, f easyjob.AuditFilter) ([]easyjob.AuditEntry, error) {
	key := url.Values{"task": {f.Task}, "before": {strconv.FormatInt(f.BeforeID, 10)}, "limit": {strconv.Itoa(f.Limit)}}
	return cached(ctx, h.cache, "audit?"+key.Encode(), func(ctx context.Context) ([]easyjob.AuditEntry, error) {
		return h.client.Audit(ctx, f)
	})
}

// taskAudit reads the last entries of task name for its page. A failed
// read does not fail the page: the section says what kind of failure it
// was (the log has the error), the rest of the page is still of use.
func (h *site) taskAudit(r *http.Request, name string) ([]easyjob.AuditEntry, string) {
	es, err := h.auditLog(r.Context(), easyjob.AuditFilter{Task: name, Limit: taskAuditEntries})
	if err != nil {
		h.opts.Logger.Error("easyjob dashboard: read failed", "path", r.URL.Path, "err", err)
		return nil, failureKind(err)
	}
	return es, ""
}
