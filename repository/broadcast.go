package repository

import (
	"errors"
	"time"
)

// ErrBroadcastNotStarted means StartBroadcast recorded nothing, so the
// fire must not run on that node: the task is paused, finished or removed,
// its definition changed since the caller read it (another revision), or
// the node recorded that fire already (the start key is unique per node).
var ErrBroadcastNotStarted = errors.New("easyjob: broadcast fire not started")

// BroadcastStart is one node's start of one fire of a broadcast task
// (TaskOptions.Broadcast), as RunStore.StartBroadcast records it.
type BroadcastStart struct {
	Task TaskID
	Node NodeID
	// ScheduledAt is the fire's time; the run's row is keyed (task, node,
	// ScheduledAt, attempt 1, batch 0).
	ScheduledAt time.Time
	// Revision is the revision of the definition the caller computed the
	// fire from (Task.Revision): a row at another revision starts nothing.
	Revision int64
	// Next is the fire after ScheduledAt (zero when there is none): the
	// row's next_start_time moves to it when it is later, so tools show
	// the task's coming fire.
	Next time.Time
}

// BroadcastAbandoned is the error an abandoned broadcast run is recorded
// with (RecoveryStore.AbandonBroadcasts).
const BroadcastAbandoned = "its node died during the run (broadcast: not run again)"
