package dashboard

import (
	"context"
	"net/http"

	"github.com/easyjob-go/easyjob/easyjob"
)

// The versioned definitions of a task (easyjob.Client.Versions): the
// "Versions" section of a task's page and GET /api/v1/tasks/{name}/versions.

// hasVersions reports whether a task's page shows its versions: a
// schedule created at runtime always (it has one from its creation), a
// task registered in code once it was rescheduled (revision > 1); a task
// never edited costs no read.
func hasVersions(t easyjob.TaskInfo) bool { return t.Dynamic || t.Revision > 1 }

// taskVersions reads the versions of task name for its page, once per
// refresh interval for everyone (an action clears the cache). A failed
// read does not fail the page: the section says what kind of failure it
// was (the log has the error).
func (h *site) taskVersions(r *http.Request, name string) ([]easyjob.Version, string) {
	vs, err := cached(r.Context(), h.cache, "versions?"+name, func(ctx context.Context) ([]easyjob.Version, error) {
		return h.client.Versions(ctx, name)
	})
	if err != nil {
		h.opts.Logger.Error("easyjob dashboard: read failed", "path", r.URL.Path, "err", err)
		return nil, failureKind(err)
	}
	return vs, ""
}

// versionList is the versions of a task, newest first (the one in force
// first).
type versionList struct {
	Versions []easyjob.Version `json:"versions"`
}

// versions answers the versions of a task: every definition it took,
// with who changed it and when.
func (a *API) versions(w http.ResponseWriter, r *http.Request) error {
	vs, err := a.client.Versions(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	if vs == nil {
		vs = []easyjob.Version{}
	}
	writeJSON(w, http.StatusOK, versionList{Versions: vs})
	return nil
}
