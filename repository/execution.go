package repository

import "time"

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
}

// HistoryFilter selects and pages executions, newest first.
type HistoryFilter struct {
	Status   ExecStatus // "" for all
	Since    time.Time  // zero for no bound
	BeforeID int64      // page: only ids below this; 0 for the first page
	Limit    int        // 0 means 100
}
