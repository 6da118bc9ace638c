package repository

import (
	"encoding/json"
	"time"
)

// Execution is one run (one attempt at one fire) of one task.
type Execution struct {
	ID                int64
	TaskID            TaskID
	TaskName          string // filled by History
	ParentExecutionID int64  // 0 for a root run
	NodeID            NodeID
	ScheduledAt       time.Time // the fire time
	StartedAt         time.Time // store clock
	FinishedAt        time.Time // zero while running
	Status            ExecStatus
	Error             string
	Attempt           int
	// Misfire names the misfire policy applied to this fire, if it was late.
	Misfire MisfireAction
	// Kind says why the run ran; "" for a run recorded before kinds were.
	Kind RunKind
	// Args are the arguments the run ran with (Task.RunArgs), JSON text;
	// "" for none.
	Args string
	// Revision is the revision of the task's definition the run ran
	// (Task.Revision); 0 for a run recorded before revisions were.
	Revision int64
	// Batch tells apart runs of one fire on one node that are not retries
	// of each other: 0 for the fire's own runs, the backfill's BackfillAt
	// in Unix microseconds for a backfill's (its chain steps' too). A
	// retried start or finish finds its row by (task, node, fire,
	// attempt, batch).
	Batch int64
}

// HistoryFilter selects and pages executions, newest first.
type HistoryFilter struct {
	Status ExecStatus // "" for all
	Since  time.Time  // zero for no bound
	// Fire keeps the runs of the fire at this time (ScheduledAt); zero
	// for all. The store finds them among the task's runs newest first:
	// the cost follows the runs recorded since.
	Fire     time.Time
	BeforeID int64 // page: only ids below this; 0 for the first page
	Limit    int   // 0 means 100
}

// RecordedArgs are args as a finish records them with its run
// (Finish.Run): as given when they are JSON text (or ""), else quoted as
// a JSON string. A finish never fails on what a run was given: the
// arguments came from the task row, which holds JSON only.
func RecordedArgs(args string) string {
	if args == "" || json.Valid([]byte(args)) {
		return args
	}
	b, _ := json.Marshal(args) // a string always encodes
	return string(b)
}

// RunEnd is how a run that went on without its claim ended
// (RunStore.EndRun): the run Run of task Task by node Node, which began
// at Started (the store's clock, as the node estimates it) and ran Ran.
type RunEnd struct {
	Task    TaskID
	Node    NodeID
	Run     Execution // ScheduledAt, Attempt, Batch, Kind, Misfire, Args, Revision
	Started time.Time
	Ran     time.Duration
	Status  ExecStatus
	Error   string
	// Log is the run's captured log (Finish.Log).
	Log string
	// PauseAfter is the task's PauseAfter option: the end that makes its
	// failures reach it pauses the task.
	PauseAfter int
}
