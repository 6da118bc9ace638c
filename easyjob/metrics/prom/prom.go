package prom

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/metrics/internal/core"
	"github.com/easyjob-go/easyjob/easyjob/observe"
)

// NodeLister reads the node table of one group; *easyjob.Client is one.
type NodeLister interface {
	Group() string
	Nodes(ctx context.Context) ([]easyjob.NodeInfo, error)
}

// Option configures New.
type Option func(*options)

type options struct {
	listers []NodeLister
	timeout time.Duration
	ttl     time.Duration // of the node table read

	noTaskLabel, noTaskGauges, noDurationBuckets bool
	taskTTL                                      time.Duration
}

// WithNodes makes easyjob_nodes{state} count the rows of each lister's
// group at scrape time (live, leaving, suspect, dead), with one
// Client.Nodes call per scrape at most every 5 s, bounded by the scrape
// timeout. Without it easyjob_nodes has only state="live", the live
// nodes in this replica's view, from its heartbeats.
func WithNodes(listers ...NodeLister) Option {
	return func(o *options) { o.listers = append(o.listers, listers...) }
}

// WithScrapeTimeout bounds the node table read of WithNodes (default 2 s).
func WithScrapeTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithoutTaskLabel aggregates the per-task counters and the run-duration
// histogram per group: easyjob_fires_total{group,trigger},
// easyjob_runs_total{group,status}, easyjob_misfires_total{group,policy}
// and easyjob_run_duration_seconds{group} do not grow with the tasks. The
// two gauges of the dead-man alert (last success, interval) stay per
// task, as an aggregate of them means nothing; WithoutTaskGauges drops
// them too.
func WithoutTaskLabel() Option {
	return func(o *options) { o.noTaskLabel = true }
}

// WithoutTaskGauges drops easyjob_task_last_success_timestamp_seconds and
// easyjob_task_interval_seconds, the per-task gauges of the dead-man
// alert. With WithoutTaskLabel no series then grows with the tasks.
func WithoutTaskGauges() Option {
	return func(o *options) { o.noTaskGauges = true }
}

// WithoutDurationBuckets exports easyjob_run_duration_seconds, the
// histogram per task, as a summary without quantiles: its _count and
// _sum only (2 series a task instead of 15), so the mean duration stays
// (rate of _sum over rate of _count) and its quantiles go. The per-group
// histograms (start lag, recovery delay, store calls) keep their
// buckets: they do not grow with the tasks.
func WithoutDurationBuckets() Option {
	return func(o *options) { o.noDurationBuckets = true }
}

// WithTaskTTL deletes the series of a task that has neither fired nor
// ended a run on this replica for d, and for at least 4 of its intervals
// (so that the dead-man alert of a task that stopped firing fires before
// its series go; it then resolves). A task moved to a peer by the
// strategy, or a runtime schedule deleted, no longer costs series here.
// Checked at each scrape. Default 0: kept until the task is removed
// (observe.EventTaskRemoved).
func WithTaskTTL(d time.Duration) Option {
	return func(o *options) { o.taskTTL = d }
}

// Observer is an observe.RunObserver that keeps Prometheus metrics.
// Create one per registry with New and give it to every Scheduler of the
// process (Config.Observer): series are labelled by group and task. It
// wraps runs only to carry a chain root's interval to its children.
type Observer struct {
	fires, runs, claims, recoveries, misfires, handovers, hbFailures *prometheus.CounterVec
	lag, recoveryDelay, storeOps                                     *prometheus.HistogramVec
	duration                                                         observerVec

	nodesDesc, heldDesc, busyDesc, intervalDesc, lastSuccessDesc, buildDesc *prometheus.Desc
	version, goVersion                                                      string

	cfg    options
	tasks  core.Tasks[taskState]  // per task
	series core.Tasks[taskSeries] // per task, or per group WithoutTaskLabel
	groups core.Tasks[groupSeries]
	ops    core.Tasks[prometheus.Observer]
	gauges core.Gauges
	nodes  core.Nodes
	// scrapeErrors counts failed node table reads (reported as
	// easyjob_nodes_scrape_errors_total).
	scrapeErrors prometheus.Counter
}

// observerVec is a HistogramVec or a SummaryVec.
type observerVec interface {
	prometheus.Collector
	WithLabelValues(lvs ...string) prometheus.Observer
	DeleteLabelValues(lvs ...string) bool
}

// taskState is what the Observer knows of one task.
type taskState struct {
	series *taskSeries
	core.TaskState
}

// taskSeries are the series of one task (of one group WithoutTaskLabel),
// resolved once.
type taskSeries struct {
	labels []string // group, task (group WithoutTaskLabel)
	// Series resolved at first use (no series for a trigger or status a
	// task never had, but for succeeded and failed, resolved at once).
	fires    [len(core.Triggers)]atomic.Pointer[prometheus.Counter]
	runs     [len(core.RunStatuses)]atomic.Pointer[prometheus.Counter]
	duration prometheus.Observer
	odd      atomic.Bool // a misfire, or a trigger or status not in the arrays: deleted by partial match
}

// groupSeries are the series of one group, resolved once.
type groupSeries struct {
	lag, recoveryDelay                prometheus.Observer
	won, lost, stolen                 prometheus.Counter
	recoveries, handovers, hbFailures prometheus.Counter
}

// ErrNilRegisterer is returned by New without a registry.
var ErrNilRegisterer = errors.New("prom: nil prometheus.Registerer: pass a registry (prometheus.NewRegistry(), or prometheus.DefaultRegisterer)")

// New returns an Observer whose metrics are registered on reg, all in
// one collector: either every metric is registered or none is. It fails
// with ErrNilRegisterer for a nil reg, and with an error wrapping
// prometheus.AlreadyRegisteredError when reg already holds an Observer's
// metrics (use one Observer per registry).
func New(reg prometheus.Registerer, opts ...Option) (*Observer, error) {
	if reg == nil {
		return nil, ErrNilRegisterer
	}
	if v := reflect.ValueOf(reg); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, ErrNilRegisterer // a nil *prometheus.Registry would panic on Register
	}
	o := newObserver(opts)
	if err := reg.Register(collector{o}); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			return nil, fmt.Errorf("prom: easyjob metrics already registered on this registry (create one Observer per registry and share it between Schedulers): %w", are)
		}
		return nil, fmt.Errorf("prom: register easyjob metrics: %w", err)
	}
	return o, nil
}

func newObserver(opts []Option) *Observer {
	cfg := options{timeout: 2 * time.Second, ttl: 5 * time.Second}
	for _, opt := range opts {
		opt(&cfg)
	}
	task := []string{"group", "task"}
	if cfg.noTaskLabel {
		task = task[:1]
	}
	perTask := func(labels ...string) []string { return append(slices.Clip(task), labels...) }
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	}
	const durationHelp = "How long jobs ran."
	var duration observerVec = histogram("easyjob_run_duration_seconds", durationHelp, core.RunBuckets, task...)
	if cfg.noDurationBuckets {
		duration = prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: "easyjob_run_duration_seconds", Help: durationHelp}, task)
	}
	o := &Observer{
		cfg:           cfg,
		fires:         counter("easyjob_fires_total", "Fires started, by trigger (cron, manual, retry, misfire, chain).", perTask("trigger")...),
		runs:          counter("easyjob_runs_total", "Runs ended, by status (succeeded, failed, timed_out).", perTask("status")...),
		claims:        counter("easyjob_claims_total", "Claims: won, lost to a peer, stolen (won past the steal threshold; also counted as won).", "group", "result"),
		recoveries:    counter("easyjob_recoveries_total", "Tasks of dead nodes recovered by this replica.", "group"),
		misfires:      counter("easyjob_misfires_total", "Fires found late past their misfire threshold, by the policy applied.", perTask("policy")...),
		handovers:     counter("easyjob_handovers_total", "Claims handed to a peer by a finish (the strategy moved the task).", "group"),
		hbFailures:    counter("easyjob_heartbeat_failures_total", "Heartbeats that could not be written.", "group"),
		lag:           histogram("easyjob_start_lag_seconds", "Start minus scheduled time of every fire (database clock; a chain child counts from its parent's scheduled time).", core.LagBuckets, "group"),
		duration:      duration,
		recoveryDelay: histogram("easyjob_recovery_delay_seconds", "How long a recovered task had been due when this replica recovered it.", core.RecoveryBuckets, "group"),
		storeOps:      histogram("easyjob_store_operation_duration_seconds", "Store calls by method in snake_case (listen: one LISTEN session).", core.StoreBuckets, "group", "op"),
		lastSuccessDesc: prometheus.NewDesc("easyjob_task_last_success_timestamp_seconds",
			"When the task's last successful run on this replica ended (Unix time).", []string{"group", "task"}, nil),
		nodesDesc: prometheus.NewDesc("easyjob_nodes", "Nodes of the group by state (live, leaving, suspect, dead); without WithNodes only live, in this replica's view.", []string{"group", "state"}, nil),
		heldDesc:  prometheus.NewDesc("easyjob_claims_held", "Claims this replica holds (queued or running).", []string{"group"}, nil),
		busyDesc:  prometheus.NewDesc("easyjob_workers_busy", "Jobs running on this replica.", []string{"group"}, nil),
		intervalDesc: prometheus.NewDesc("easyjob_task_interval_seconds",
			"Longest gap between consecutive fires of the task's cron (a chain step: of its root's): the unit of a 'not succeeded within N intervals' alert.", []string{"group", "task"}, nil),
		buildDesc: prometheus.NewDesc("easyjob_build_info", "The easyjob version and Go version of this binary; always 1.", []string{"version", "goversion"}, nil),
		scrapeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "easyjob_nodes_scrape_errors_total", Help: "Node table reads (WithNodes) that failed.",
		}),
		nodes: core.Nodes{Listers: core.Listers(cfg.listers), Timeout: cfg.timeout, TTL: cfg.ttl},
	}
	o.version, o.goVersion = core.Version()
	o.series.New = func(k core.Key) *taskSeries {
		s := &taskSeries{labels: []string{k.Group, k.Task}}
		if cfg.noTaskLabel {
			s.labels = s.labels[:1:1]
		}
		s.duration = o.duration.WithLabelValues(s.labels...)
		for i, st := range core.RunStatuses[:2] { // succeeded, failed: from zero, for increase()
			c := o.runs.WithLabelValues(append(s.labels, string(st))...)
			s.runs[i].Store(&c)
		}
		return s
	}
	o.tasks.New = func(k core.Key) *taskState {
		if cfg.noTaskLabel {
			k.Task = ""
		}
		return &taskState{series: o.series.Get(k.Group, k.Task)}
	}
	o.groups.New = func(k core.Key) *groupSeries {
		return &groupSeries{
			lag:           o.lag.WithLabelValues(k.Group),
			recoveryDelay: o.recoveryDelay.WithLabelValues(k.Group),
			won:           o.claims.WithLabelValues(k.Group, core.ClaimWon),
			lost:          o.claims.WithLabelValues(k.Group, core.ClaimLost),
			stolen:        o.claims.WithLabelValues(k.Group, core.ClaimStolen),
			recoveries:    o.recoveries.WithLabelValues(k.Group),
			handovers:     o.handovers.WithLabelValues(k.Group),
			hbFailures:    o.hbFailures.WithLabelValues(k.Group),
		}
	}
	o.ops.New = func(k core.Key) *prometheus.Observer {
		h := o.storeOps.WithLabelValues(k.Group, core.OpLabel(k.Task))
		return &h
	}
	return o
}

// Observe implements observe.Observer. It allocates nothing once a task,
// group and store method have been seen.
func (o *Observer) Observe(e observe.Event) {
	switch e.Kind {
	case observe.EventFire:
		t := o.tasks.Get(e.Group, e.Task)
		s := t.series
		if i := core.TriggerIndex(e.Trigger); i >= 0 {
			resolve(&s.fires[i], o.fires, s.labels, string(e.Trigger)).Inc()
		} else {
			s.odd.Store(true)
			o.fires.WithLabelValues(append(s.labels, string(e.Trigger))...).Inc()
		}
		t.Fired(e)
		o.groups.Get(e.Group, "").lag.Observe(e.Lag.Seconds())
	case observe.EventRunEnd:
		t := o.tasks.Get(e.Group, e.Task)
		s := t.series
		if i := core.StatusIndex(e.Status); i >= 0 {
			resolve(&s.runs[i], o.runs, s.labels, string(e.Status)).Inc()
		} else {
			s.odd.Store(true)
			o.runs.WithLabelValues(append(s.labels, string(e.Status))...).Inc()
		}
		s.duration.Observe(e.Duration.Seconds())
		t.Ended(e)
	case observe.EventClaim:
		g := o.groups.Get(e.Group, "")
		g.won.Add(float64(e.Count))
		g.lost.Add(float64(e.Lost))
		g.stolen.Add(float64(e.Stolen))
	case observe.EventRecovery:
		g := o.groups.Get(e.Group, "")
		g.recoveries.Add(float64(max(e.Count, 1)))
		g.recoveryDelay.Observe(e.Lag.Seconds())
	case observe.EventMisfire:
		s := o.tasks.Get(e.Group, e.Task).series
		s.odd.Store(true)
		o.misfires.WithLabelValues(append(s.labels, string(e.Misfire))...).Inc()
	case observe.EventHandover:
		o.groups.Get(e.Group, "").handovers.Inc()
	case observe.EventHeartbeatFailed:
		o.groups.Get(e.Group, "").hbFailures.Inc()
	case observe.EventGauges:
		o.gauges.Set(e)
	case observe.EventStoreOp:
		(*o.ops.Get(e.Group, e.Op)).Observe(e.Duration.Seconds())
	case observe.EventTaskRemoved:
		o.forget(e.Group, e.Task)
	}
}

// StartRun implements observe.RunObserver: a run's context carries its
// interval, so that a chain step (no cron of its own) gets its root's.
func (o *Observer) StartRun(ctx context.Context, r observe.RunInfo) (context.Context, func(observe.RunResult)) {
	if o.cfg.noTaskGauges {
		return ctx, endRun
	}
	return o.tasks.Get(r.Group, r.Task).Chain.StartRun(ctx, r), endRun
}

func endRun(observe.RunResult) {}

// forget deletes the series of (group, task): removed, or idle past the
// TTL. A task's series shared by its group (WithoutTaskLabel) stay.
func (o *Observer) forget(group, task string) {
	if o.tasks.Delete(group, task) == nil || o.cfg.noTaskLabel {
		return
	}
	s := o.series.Delete(group, task)
	if s == nil {
		return
	}
	for _, tr := range core.Triggers {
		o.fires.DeleteLabelValues(group, task, string(tr))
	}
	for _, st := range core.RunStatuses {
		o.runs.DeleteLabelValues(group, task, string(st))
	}
	o.duration.DeleteLabelValues(group, task)
	if s.odd.Load() {
		match := prometheus.Labels{"group": group, "task": task}
		o.fires.DeletePartialMatch(match)
		o.runs.DeletePartialMatch(match)
		o.misfires.DeletePartialMatch(match)
	}
}

// resolve returns the series *p caches, resolving it in vec on first use
// (concurrent first uses resolve the same series).
func resolve[M any, V interface{ WithLabelValues(...string) M }](p *atomic.Pointer[M], vec V, labels []string, label string) M {
	if m := p.Load(); m != nil {
		return *m
	}
	m := vec.WithLabelValues(append(labels, label)...)
	p.Store(&m)
	return m
}

// collector is the Observer as one prometheus.Collector.
type collector struct{ o *Observer }

func (c collector) vecs() []prometheus.Collector {
	o := c.o
	return []prometheus.Collector{o.fires, o.runs, o.claims, o.recoveries, o.misfires, o.handovers, o.hbFailures,
		o.lag, o.duration, o.recoveryDelay, o.storeOps, o.scrapeErrors}
}

// Describe implements prometheus.Collector.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range c.vecs() {
		v.Describe(ch)
	}
	o := c.o
	for _, d := range []*prometheus.Desc{o.nodesDesc, o.heldDesc, o.busyDesc, o.intervalDesc, o.lastSuccessDesc, o.buildDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. With WithNodes it reads the
// node table (cached for 5 s, bounded by the scrape timeout).
func (c collector) Collect(ch chan<- prometheus.Metric) {
	o := c.o
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counted := map[string]bool{}
	states, err := o.nodes.States(context.Background())
	if err != nil {
		o.scrapeErrors.Inc()
	}
	for _, g := range states {
		counted[g.Group] = true
		for i, s := range core.NodeStates {
			gauge(o.nodesDesc, float64(g.Counts[i]), g.Group, s)
		}
	}
	for _, g := range o.gauges.Groups() {
		if !counted[g.Group] {
			gauge(o.nodesDesc, float64(g.Live), g.Group, core.NodeLive)
		}
		gauge(o.heldDesc, float64(g.Held), g.Group)
		gauge(o.busyDesc, float64(g.Busy), g.Group)
	}
	o.sweep()
	if !o.cfg.noTaskGauges {
		o.tasks.Each(func(k core.Key, t *taskState) {
			if v, ok := t.LastSuccess(); ok {
				gauge(o.lastSuccessDesc, v, k.Group, k.Task)
			}
			if d, ok := t.Interval(); ok {
				gauge(o.intervalDesc, d.Seconds(), k.Group, k.Task)
			}
		})
	}
	gauge(o.buildDesc, 1, o.version, o.goVersion)
	for _, v := range c.vecs() {
		v.Collect(ch)
	}
}

// sweep forgets the tasks idle past the TTL (WithTaskTTL).
func (o *Observer) sweep() {
	for _, k := range core.Idle(&o.tasks, o.cfg.taskTTL, func(t *taskState) *core.TaskState { return &t.TaskState }) {
		o.forget(k.Group, k.Task)
	}
}

var (
	_ observe.RunObserver  = (*Observer)(nil)
	_ prometheus.Collector = collector{}
)
