package easyjob

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// claimed is one claim this node holds in memory: queued in the delay
// queue, waiting for a worker, or running.
type claimed struct {
	task    repository.Task // the row as claimed: Version and NodeID are the fence
	spec    *taskSpec
	localAt time.Time // local fire time (database time minus offset)
	index   int       // position in the delay queue, -1 when not queued
	epoch   int64     // node.epoch when claimed: a silence since voids it

	// guarded by node.mu
	state    claimState
	waitFrom time.Time          // when it started waiting for a worker
	cancel   context.CancelFunc // set while running

	foundAt   time.Time                // database time the boss fired it
	misfire   repository.MisfirePolicy // set by the boss; "" on time
	startDone chan struct{}            // closed by the starter once exec/startErr are set
	exec      repository.Execution
	startErr  error
}

type claimState int

const (
	stateQueued claimState = iota
	stateWaiting
	stateRunning
)
