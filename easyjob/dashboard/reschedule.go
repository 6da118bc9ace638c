package dashboard

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// previewFires is how many fires the reschedule preview lists.
const previewFires = 5

// rescheduleData is the reschedule page: the task's cron now, the one
// asked for, and either its next fires (to confirm) or why it is invalid.
type rescheduleData struct {
	Task    easyjob.TaskInfo
	Cron    string
	Words   string
	Fires   []time.Time
	Invalid string
}

// reschedulePreview shows the fires a new cron would give the task before
// anything is saved.
func (h *site) reschedulePreview(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	h.reschedulePage(w, r, http.StatusOK, q.Get("name"), q.Get("cron"), nil)
}

// reschedulePage validates cron for the task and renders the preview with
// status (or 422 when cron is invalid); failed is an error a save gave.
func (h *site) reschedulePage(w http.ResponseWriter, r *http.Request, status int, name, cron string, failed error) {
	t, err := h.client.Task(r.Context(), name)
	if err != nil {
		h.readFailed(w, r, name, err)
		return
	}
	cron = strings.TrimSpace(cron)
	d := rescheduleData{Task: t, Cron: cron, Words: describeCron(cron, t.Timezone)}
	if failed == nil && (cron != "" || r.URL.Query().Has("cron")) {
		d.Fires, failed = h.client.PreviewReschedule(r.Context(), name, cron, previewFires)
	}
	if failed != nil {
		if !errors.Is(failed, easyjob.ErrInvalidCron) {
			h.unavailable(w, r, failed)
			return
		}
		d.Invalid, d.Fires = failed.Error(), nil
		status = http.StatusUnprocessableEntity
	}
	now, err := h.client.Now(r.Context())
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	h.render(w, r, status, "reschedule", page{Title: "Reschedule " + name, Now: now, Data: d})
}
