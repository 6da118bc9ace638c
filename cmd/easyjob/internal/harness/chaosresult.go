package harness

import "time"

// interruptWindow: a duplicate run is a re-run of an interrupted fire when
// the first run started at most this long before its node was killed or
// frozen (a near-instant job finishes within milliseconds otherwise).
const interruptWindow = 5 * time.Second

// fault is one injected (or spontaneous) failure.
type fault struct {
	Kind    string    `json:"kind"` // kill | freeze | pg-restart | pg-stop | silent-path | clock-step | clock-failover | switchover | primary-kill | patroni-kill | etcd-loss | pgbouncer-restart | exit (a process exited on its own)
	Proc    string    `json:"proc,omitempty"`
	NodeIDs []int64   `json:"node_ids,omitempty"`
	At      time.Time `json:"at"`
	Until   time.Time `json:"until"` // restart / SIGCONT / PostgreSQL answering again
	// Failover: kill/freeze → first fire elsewhere of each task whose
	// previous fire was on the faulty node.
	Tasks          int     `json:"tasks_affected"`
	Failover       latency `json:"failover"`
	NotFailedOver  int     `json:"not_failed_over,omitempty"`
	ResumedOnSelf  int     `json:"resumed_on_same_node,omitempty"`
	PGCommandError string  `json:"pg_command_error,omitempty"`
	// Resume: pg-restart/pg-stop/silent-path/pgbouncer-restart → for each
	// task, its first fire after PostgreSQL (or PgBouncer) answered again.
	Resume latency `json:"resume_after_pg,omitempty"`
	// Clock-step: the step of the database's clock (signed), the offset
	// to the local clock a query saw right after it, each task's first
	// fire after the step (from the step), and the start lag, on the
	// database's clock, of the fires while the nodes settle on the new
	// clock (DeadAfter + a heartbeat).
	StepMS       float64  `json:"clock_step_ms,omitempty"`
	SeenOffsetMS *float64 `json:"db_clock_offset_seen_ms,omitempty"`
	AfterStep    latency  `json:"first_fire_after_step,omitempty"`
	StepLag      latency  `json:"start_lag_after_step,omitempty"`
	// Patroni faults (--patroni): the leader struck and the member that
	// accepted writes next (Until is when it did; Resume is measured from
	// then), the tasks that did not fire within the lost-fire threshold of
	// it, the duplicates in the fault's window (violations and allowed
	// re-runs), and how long from the fault the cluster took to be back to
	// a leader and two streaming replicas.
	Leader    string  `json:"leader,omitempty"`
	NewLeader string  `json:"writes_accepted_by,omitempty"`
	LostTasks int     `json:"tasks_not_resumed,omitempty"`
	Doubled   int     `json:"doubled,omitempty"`
	Reruns    int     `json:"allowed_reruns,omitempty"`
	HealedMS  float64 `json:"cluster_healed_ms,omitempty"`
	// --patroni-async: how long the leader's walsenders were stopped
	// before a patroni-kill, and the WAL it wrote meanwhile that no
	// replica received (lost by the promotion).
	// etcd-loss: the etcd member killed (and whether it led the raft
	// cluster), the write probes while it was down and how many failed,
	// and how long from its restart it took to be healthy again.
	EtcdMember        string  `json:"etcd_member_killed,omitempty"`
	EtcdLeader        bool    `json:"etcd_member_was_leader,omitempty"`
	WriteProbes       int     `json:"write_probes,omitempty"`
	WriteProbesFailed int     `json:"write_probes_failed,omitempty"`
	EtcdRejoinMS      float64 `json:"etcd_rejoined_ms,omitempty"`
	WithheldMS        float64 `json:"wal_withheld_ms,omitempty"`
	WithheldBytes     int64   `json:"wal_withheld_bytes,omitempty"`
	Unjudged          bool    `json:"too_late_to_judge_lost,omitempty"` // writes came back less than the lost-fire threshold before the steady window closed
	struck            bool    // the fault was issued (not given up before, e.g. for want of a leader)
	win               [2]time.Time
	idx               int // incarnation index
	step              time.Duration
	failovers         []time.Duration
	resumeDs          []time.Duration // each task's first fire after the database accepted writes again (Resume's samples)
}

// clockStep is a clock-step fault as the analysis uses it: at local time
// at the database's clock moved by step, to offset ahead of the local one.
type clockStep struct {
	at     int64 // unix nanos
	step   time.Duration
	offset time.Duration
	f      *fault
}

// lostFire is a task silent for longer than the threshold.
type lostFire struct {
	Task     string    `json:"task"`
	From     time.Time `json:"silent_from"`
	To       time.Time `json:"silent_to"`
	GapMS    float64   `json:"gap_ms"`
	Before   string    `json:"last_fire_before,omitempty"`
	After    string    `json:"first_fire_after,omitempty"`
	PGWindow bool      `json:"during_pg_restart"`
	// ClockBack: the silence spans a step back of the database's clock,
	// which holds every task for the step, and is no longer than the
	// threshold plus the step.
	ClockBack bool `json:"held_by_clock_step_back,omitempty"`
}

// dupReport is one (task, scheduled time) run more than once.
type dupReport struct {
	Task    string   `json:"task"`
	Sched   string   `json:"scheduled"`
	Class   string   `json:"class"` // rerun-after-kill | rerun-after-freeze | rerun-after-exit | during-pg-restart | during-clock-step | violation
	Runs    []string `json:"runs"`
	Because string   `json:"because,omitempty"`
}

type selfExit struct {
	Proc    string    `json:"proc"`
	At      time.Time `json:"at"`
	Status  string    `json:"status"`
	LastLog []string  `json:"last_log,omitempty"`
}

type chaosResult struct {
	Procs           int     `json:"procs"`
	Tasks           int     `json:"tasks"`
	Cron            string  `json:"cron"`
	DurationSeconds float64 `json:"duration_seconds"`
	Seed            uint64  `json:"seed"`
	HeartbeatMS     float64 `json:"heartbeat_ms"`
	DeadAfterMS     float64 `json:"dead_after_ms"`
	RecoverMS       float64 `json:"recover_interval_ms"`
	LostThresholdMS float64 `json:"lost_threshold_ms"`
	FailoverBoundMS float64 `json:"failover_target_ms"`

	Fires       int     `json:"fires"`
	FiresPerSec float64 `json:"fires_per_sec"`
	Lag         latency `json:"start_lag"` // on the database's clock; without the fires settling after a clock step
	StepFires   int     `json:"fires_settling_after_clock_step,omitempty"`
	EarlyFires  int     `json:"fires_early_on_db_clock"` // started more than earlySlack before their fire time (database clock)
	EarliestMS  float64 `json:"earliest_start_lag_ms,omitempty"`
	Missed      int     `json:"missed_fire_times"` // informational: fire times with no run (misfire policy may merge late fires)

	Faults         []*fault `json:"faults"`
	KillFailover   latency  `json:"kill_failover"`
	FreezeFailover latency  `json:"freeze_failover"`
	AllFailover    latency  `json:"failover"`

	Duplicates      int `json:"duplicates"`
	AllowedReruns   int `json:"allowed_reruns"`
	PGDuplicates    int `json:"duplicates_during_pg_restart"`
	ClockDuplicates int `json:"duplicates_during_clock_step,omitempty"`
	Violations      int `json:"violations"`
	// Overlap is the verdict on the overlap task set (--overlap-tasks).
	Overlap         *overlapReport `json:"overlap,omitempty"`
	DAG             *dagReport     `json:"dag,omitempty"` // the verdict on the DAG task set (--dag)
	DupDetails      []dupReport    `json:"duplicate_details,omitempty"`
	Lost            int            `json:"lost_fires"`
	FailoverLost    int            `json:"tasks_not_resumed_after_db_failover,omitempty"`
	PGDelayed       int            `json:"delayed_by_pg_restart"`
	ClockHeld       int            `json:"held_by_clock_step_back,omitempty"`
	LostDetails     []lostFire     `json:"lost_details,omitempty"`
	ChainFires      int            `json:"chain_fires"`
	LostSteps       int            `json:"lost_chain_steps"`
	LostStepDetails []lostStep     `json:"lost_chain_step_details,omitempty"`
	// Unrecorded: runs in the ledgers without their row in the history;
	// UnrecordedKilled: those whose process was killed as they ran.
	Unrecorded        int        `json:"unrecorded_runs"`
	UnrecordedKilled  int        `json:"unrecorded_runs_killed"`
	UnrecordedDetails []string   `json:"unrecorded_run_details,omitempty"`
	HistoryError      string     `json:"history_error,omitempty"`
	FencedFinishes    int64      `json:"fenced_finishes"`
	StartLost         int64      `json:"start_claim_lost"`
	Recovered         int64      `json:"recovered_tasks"`
	SelfExits         []selfExit `json:"self_exits,omitempty"`
	Incarnations      int        `json:"processes_started"`
	Dir               string     `json:"dir,omitempty"`
	StoreErrors       int64      `json:"store_errors"`
	Failed            bool       `json:"failed"`
	FailureReasons    []string   `json:"failure_reasons,omitempty"`
	pgWindows         [][2]time.Time
	clockSteps        []clockStep // by time
	stepSettle        time.Duration
	procNames         []string
	history           map[runKey]bool // the run's history (the DAG set's sharded fires); nil when unread
	killFailovers     []time.Duration
	freezeFailovers   []time.Duration
}

// downsNode reports whether f took a node down (kill, freeze or a process
// exiting on its own), so that the node's tasks must fail over.
func (f *fault) downsNode() bool {
	return f.Kind == "kill" || f.Kind == "freeze" || f.Kind == "exit"
}
