package prom

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/metrics/internal/core"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
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
	ttl     time.Duration
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

// Observer is an observe.Observer that keeps Prometheus metrics. Create
// one per registry with New and give it to every Scheduler of the
// process (Config.Observer): series are labelled by group and task.
type Observer struct {
	fires, runs, claims, recoveries, misfires, handovers, hbFailures *prometheus.CounterVec
	lag, duration, recoveryDelay, storeOps                           *prometheus.HistogramVec
	lastSuccess                                                      *prometheus.GaugeVec

	nodesDesc, heldDesc, busyDesc, intervalDesc, buildDesc *prometheus.Desc
	version, goVersion                                     string

	tasks  core.Tasks[taskSeries]
	groups core.Tasks[groupSeries]
	ops    core.Tasks[prometheus.Observer]
	gauges core.Gauges
	nodes  core.Nodes
	// scrapeErrors counts failed node table reads (reported as
	// easyjob_nodes_scrape_errors_total).
	scrapeErrors prometheus.Counter
}

// taskSeries are the series of one task, resolved once.
type taskSeries struct {
	// Series resolved at first use (no series for a trigger or status a
	// task never had, but for succeeded and failed, resolved at once).
	fires       [len(core.Triggers)]atomic.Pointer[prometheus.Counter]
	runs        [len(core.RunStatuses)]atomic.Pointer[prometheus.Counter]
	lastSuccess atomic.Pointer[prometheus.Gauge] // at the first success: no series before
	duration    prometheus.Observer
	cron        atomic.Pointer[string] // as last fired, for the interval
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
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	}
	o := &Observer{
		fires:         counter("easyjob_fires_total", "Fires started, by trigger (cron, manual, retry, misfire, chain).", "group", "task", "trigger"),
		runs:          counter("easyjob_runs_total", "Runs ended, by status (succeeded, failed, timed_out).", "group", "task", "status"),
		claims:        counter("easyjob_claims_total", "Claims: won, lost to a peer, stolen (won past the steal threshold; also counted as won).", "group", "result"),
		recoveries:    counter("easyjob_recoveries_total", "Tasks of dead nodes recovered by this replica.", "group"),
		misfires:      counter("easyjob_misfires_total", "Fires found late past their misfire threshold, by the policy applied.", "group", "task", "policy"),
		handovers:     counter("easyjob_handovers_total", "Claims handed to a peer by a finish (the strategy moved the task).", "group"),
		hbFailures:    counter("easyjob_heartbeat_failures_total", "Heartbeats that could not be written.", "group"),
		lag:           histogram("easyjob_start_lag_seconds", "Start minus scheduled time of every fire (database clock; a chain child counts from its parent's scheduled time).", core.LagBuckets, "group"),
		duration:      histogram("easyjob_run_duration_seconds", "How long jobs ran.", core.RunBuckets, "group", "task"),
		recoveryDelay: histogram("easyjob_recovery_delay_seconds", "How long a recovered task had been due when this replica recovered it.", core.RecoveryBuckets, "group"),
		storeOps:      histogram("easyjob_store_operation_duration_seconds", "Store calls by method (Listen: one LISTEN session).", core.StoreBuckets, "group", "op"),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "easyjob_task_last_success_timestamp_seconds",
			Help: "When the task's last successful run on this replica ended (Unix time).",
		}, []string{"group", "task"}),
		nodesDesc: prometheus.NewDesc("easyjob_nodes", "Nodes of the group by state (live, leaving, suspect, dead); without WithNodes only live, in this replica's view.", []string{"group", "state"}, nil),
		heldDesc:  prometheus.NewDesc("easyjob_claims_held", "Claims this replica holds (queued or running).", []string{"group"}, nil),
		busyDesc:  prometheus.NewDesc("easyjob_workers_busy", "Jobs running on this replica.", []string{"group"}, nil),
		intervalDesc: prometheus.NewDesc("easyjob_task_interval_seconds",
			"Longest gap between consecutive fires of the task's cron: the unit of a 'not succeeded within N intervals' alert.", []string{"group", "task"}, nil),
		buildDesc: prometheus.NewDesc("easyjob_build_info", "The easyjob version and Go version of this binary; always 1.", []string{"version", "goversion"}, nil),
		scrapeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "easyjob_nodes_scrape_errors_total", Help: "Node table reads (WithNodes) that failed.",
		}),
		nodes: core.Nodes{Listers: core.Listers(cfg.listers), Timeout: cfg.timeout, TTL: cfg.ttl},
	}
	o.version, o.goVersion = core.Version()
	o.tasks.New = func(k core.Key) *taskSeries {
		t := &taskSeries{
			duration: o.duration.WithLabelValues(k.Group, k.Task),
		}
		for i, st := range core.RunStatuses[:2] { // succeeded, failed: from zero, for increase()
			c := o.runs.WithLabelValues(k.Group, k.Task, string(st))
			t.runs[i].Store(&c)
		}
		return t
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
		h := o.storeOps.WithLabelValues(k.Group, k.Task)
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
		if i := core.TriggerIndex(e.Trigger); i >= 0 {
			resolve(&t.fires[i], o.fires, e.Group, e.Task, string(e.Trigger)).Inc()
		} else {
			o.fires.WithLabelValues(e.Group, e.Task, string(e.Trigger)).Inc()
		}
		if p := t.cron.Load(); p == nil || *p != e.Cron {
			c := e.Cron
			t.cron.Store(&c)
		}
		o.groups.Get(e.Group, "").lag.Observe(e.Lag.Seconds())
	case observe.EventRunEnd:
		t := o.tasks.Get(e.Group, e.Task)
		if i := core.StatusIndex(e.Status); i >= 0 {
			resolve(&t.runs[i], o.runs, e.Group, e.Task, string(e.Status)).Inc()
		} else {
			o.runs.WithLabelValues(e.Group, e.Task, string(e.Status)).Inc()
		}
		t.duration.Observe(e.Duration.Seconds())
		if e.Status == repository.ExecSucceeded {
			resolve(&t.lastSuccess, o.lastSuccess, e.Group, e.Task).Set(float64(e.At.UnixNano()) / 1e9)
		}
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
		o.misfires.WithLabelValues(e.Group, e.Task, string(e.Misfire)).Inc()
	case observe.EventHandover:
		o.groups.Get(e.Group, "").handovers.Inc()
	case observe.EventHeartbeatFailed:
		o.groups.Get(e.Group, "").hbFailures.Inc()
	case observe.EventGauges:
		o.gauges.Set(e)
	case observe.EventStoreOp:
		(*o.ops.Get(e.Group, e.Op)).Observe(e.Duration.Seconds())
	}
}

// resolve returns the series *p caches, resolving it in vec on first use
// (concurrent first uses resolve the same series).
func resolve[M any, V interface{ WithLabelValues(...string) M }](p *atomic.Pointer[M], vec V, group, task string, label ...string) M {
	if m := p.Load(); m != nil {
		return *m
	}
	m := vec.WithLabelValues(append([]string{group, task}, label...)...)
	p.Store(&m)
	return m
}

// collector is the Observer as one prometheus.Collector.
type collector struct{ o *Observer }

func (c collector) vecs() []prometheus.Collector {
	o := c.o
	return []prometheus.Collector{o.fires, o.runs, o.claims, o.recoveries, o.misfires, o.handovers, o.hbFailures,
		o.lag, o.duration, o.recoveryDelay, o.storeOps, o.lastSuccess, o.scrapeErrors}
}

// Describe implements prometheus.Collector.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range c.vecs() {
		v.Describe(ch)
	}
	o := c.o
	for _, d := range []*prometheus.Desc{o.nodesDesc, o.heldDesc, o.busyDesc, o.intervalDesc, o.buildDesc} {
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
	o.tasks.Each(func(k core.Key, t *taskSeries) {
		if p := t.cron.Load(); p != nil {
			if d, ok := core.Interval(*p); ok {
				gauge(o.intervalDesc, d.Seconds(), k.Group, k.Task)
			}
		}
	})
	gauge(o.buildDesc, 1, o.version, o.goVersion)
	for _, v := range c.vecs() {
		v.Collect(ch)
	}
}

var (
	_ observe.Observer     = (*Observer)(nil)
	_ prometheus.Collector = collector{}
)
