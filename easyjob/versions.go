package easyjob

import (
	"context"
	"encoding/json"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Version is one definition a task took: what a schedule was created with
// (revision 1), and each edit after it (Update, Reschedule, a reset), with
// who made the change and when. A run records the revision it ran
// (ExecutionInfo.Revision), so a run can be matched with the definition
// it ran. The newest version is the one in force.
//
// A task registered in code has a version for each reschedule only: its
// code's definition is in the code, never recorded.
type Version struct {
	// Revision is the task's Revision once this definition was written.
	Revision int64  `json:"revision"`
	Handler  string `json:"handler"`
	Cron     string `json:"cron"`
	// Args are the schedule's arguments (JSON), nil for none.
	Args json.RawMessage `json:"args,omitempty"`
	// Options are the task's policies (time zone, timeout, retries,
	// misfire, recovery), as stored (durations in nanoseconds).
	Options repository.TaskOptions `json:"options"`
	// ChangedAt is when the change was written (the store's clock).
	ChangedAt time.Time `json:"changed_at"`
	// ChangedBy is who made the change, as the audit log records it
	// (WithActor); empty for a change recorded without one (a schema
	// upgrade records a schedule's definition then in force via
	// "migration").
	ChangedBy Actor `json:"changed_by"`
}

// Versions lists the definitions the task name took, newest first: a
// schedule created at runtime from its creation on, a registered task
// from its first reschedule (none before). A removed task whose history
// was kept still has its versions; a schedule created again under a
// removed one's name starts again at revision 1, the older versions gone
// (its older runs keep the revision numbers they recorded). An unknown
// name is ErrTaskNotFound.
func (c *Client) Versions(ctx context.Context, name string) ([]Version, error) {
	rs, err := c.store.Revisions(ctx, c.group, name)
	if err != nil {
		return nil, c.wrap("versions of", name, err)
	}
	out := make([]Version, len(rs))
	for i, r := range rs {
		out[i] = versionOf(r)
	}
	return out, nil
}

// versionOf converts a stored revision.
func versionOf(r repository.Revision) Version {
	return Version{
		Revision: r.Revision, Handler: r.Handler, Cron: r.Cron, Args: rawArgs(r.Args),
		Options: r.Options, ChangedAt: r.ChangedAt, ChangedBy: r.Actor,
	}
}
