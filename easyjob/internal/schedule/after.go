package schedule

import (
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// AfterParents is the schedule of a DAG step (repository.TaskOptions
// Parents): no fire of its own. Its next fire is always
// repository.AwaitingParents, so a finished step's row waits, unclaimed,
// until its parents make it due again (repository.DagStore).
func AfterParents() Schedule { return Schedule{afterParents: true} }

// AfterParents reports whether s is AfterParents().
func (s Schedule) AfterParents() bool { return s.afterParents }

// awaitParents is Next of an AfterParents schedule.
func awaitParents() (time.Time, bool) { return repository.AwaitingParents, true }
