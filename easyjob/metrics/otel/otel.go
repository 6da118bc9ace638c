package otel

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/metrics/internal/core"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/easyjob-go/easyjob/easyjob/metrics/otel"

// Attribute keys of spans and metrics. Metric attributes carry the same
// names as the Prometheus labels of easyjob/metrics/prom.
const (
	KeyGroup   = attribute.Key("easyjob.group")
	KeyTask    = attribute.Key("easyjob.task")
	KeyNode    = attribute.Key("easyjob.node")
	KeyAttempt = attribute.Key("easyjob.attempt")
	KeyTrigger = attribute.Key("easyjob.trigger")
	KeyMisfire = attribute.Key("easyjob.misfire")
	KeyStatus  = attribute.Key("easyjob.status")
)

// NodeLister reads the node table of one group; *easyjob.Client is one.
type NodeLister interface {
	Group() string
	Nodes(ctx context.Context) ([]easyjob.NodeInfo, error)
}

// Option configures New.
type Option func(*options)

type options struct {
	tp      trace.TracerProvider
	mp      metric.MeterProvider
	listers []NodeLister
	timeout time.Duration

	noTaskLabel, noTaskGauges, noDurationBuckets bool
	taskTTL                                      time.Duration
}

// WithTracerProvider sets where spans go (default, or nil: the global
// otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tp = tp }
}

// WithMeterProvider sets where metrics go (default, or nil: the global
// otel.GetMeterProvider()).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.mp = mp }
}

// WithNodes makes easyjob.nodes count the rows of each lister's group by
// state (live, leaving, suspect, dead) when the reader collects, with one
// Client.Nodes call per collection at most every 5 s, bounded by the
// timeout (WithNodesTimeout). Without it easyjob.nodes has only
// state=live, the live nodes in this replica's view.
func WithNodes(listers ...NodeLister) Option {
	return func(o *options) { o.listers = append(o.listers, listers...) }
}

// WithNodesTimeout bounds the node table read of WithNodes (default 2 s).
func WithNodesTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithoutTaskLabel aggregates easyjob.fires, easyjob.runs,
// easyjob.misfires and easyjob.run_duration per group (spans keep
// easyjob.task). It, WithoutTaskGauges, WithoutDurationBuckets and
// WithTaskTTL bound the series as their namesakes in easyjob/metrics/prom
// do, with these differences. WithoutDurationBuckets: easyjob.run_duration
// gets one bucket bound (1 h), the fewest the metric API can advise (none
// means the SDK's defaults); for none, give the instrument a View with
// AggregationExplicitBucketHistogram{Boundaries: []float64{}}.
// WithTaskTTL, and a removal (observe.EventTaskRemoved): a forgotten
// task's gauges go at the next collection, its counters and histogram
// only under delta temporality (the SDK keeps every cumulative series it
// has seen).
func WithoutTaskLabel() Option { return func(o *options) { o.noTaskLabel = true } }

// WithoutTaskGauges drops easyjob.task_last_success_timestamp and
// easyjob.task_interval (see WithoutTaskLabel).
func WithoutTaskGauges() Option { return func(o *options) { o.noTaskGauges = true } }

// WithoutDurationBuckets gives easyjob.run_duration one bucket bound (see
// WithoutTaskLabel).
func WithoutDurationBuckets() Option { return func(o *options) { o.noDurationBuckets = true } }

// WithTaskTTL forgets a task idle on this replica for d and 4 of its
// intervals (see WithoutTaskLabel). Default 0: kept until removed.
func WithTaskTTL(d time.Duration) Option { return func(o *options) { o.taskTTL = d } }

// Observer is an observe.RunObserver that traces every run and records
// the easyjob metrics through the OpenTelemetry metric API. Create it
// with New and give it to every Scheduler of the process
// (Config.Observer); Close unregisters its gauge callback.
type Observer struct {
	tracer trace.Tracer

	fires, runs, claims, recoveries, misfires, handovers, hbFailures metric.Int64Counter
	lag, duration, recoveryDelay, storeOps                           metric.Float64Histogram
	reg                                                              metric.Registration

	cfg    options
	tasks  core.Tasks[taskState]  // per task
	series core.Tasks[taskSeries] // per task, or per group WithoutTaskLabel
	groups core.Tasks[groupSeries]
	ops    core.Tasks[[]metric.RecordOption]
	gauges core.Gauges
	nodes  core.Nodes
	build  metric.ObserveOption
}

// taskState is what the Observer knows of one task.
type taskState struct {
	series  *taskSeries
	observe metric.ObserveOption // group, task
	core.TaskState
}

// taskSeries holds one task's attribute sets (one group's WithoutTaskLabel),
// built once.
type taskSeries struct {
	attrs []attribute.KeyValue // group, task (group WithoutTaskLabel)
	fires [len(core.Triggers)][]metric.AddOption
	runs  [len(core.RunStatuses)][]metric.AddOption
	task  []metric.RecordOption
}

// groupSeries holds one group's attribute sets, built once.
type groupSeries struct {
	group             []metric.AddOption
	record            []metric.RecordOption
	observe           metric.ObserveOption
	won, lost, stolen []metric.AddOption
	states            [len(core.NodeStates)]metric.ObserveOption
	live              metric.ObserveOption
}

// New returns an Observer on the configured (or global) providers.
func New(opts ...Option) (*Observer, error) {
	cfg := options{timeout: 2 * time.Second}
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	version, goVersion := core.Version()
	o := &Observer{
		cfg:    cfg,
		tracer: cfg.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(version)),
		nodes:  core.Nodes{Listers: core.Listers(cfg.listers), Timeout: cfg.timeout, TTL: 5 * time.Second},
		build:  metric.WithAttributes(attribute.String("version", version), attribute.String("goversion", goVersion)),
	}
	if err := o.instruments(cfg.mp.Meter(ScopeName, metric.WithInstrumentationVersion(version))); err != nil {
		return nil, fmt.Errorf("otel: create instruments: %w", err)
	}
	o.series.New = func(k core.Key) *taskSeries {
		t := &taskSeries{attrs: []attribute.KeyValue{attribute.String("group", k.Group), attribute.String("task", k.Task)}}
		if cfg.noTaskLabel {
			t.attrs = t.attrs[:1:1]
		}
		for i, tr := range core.Triggers {
			t.fires[i] = addOpts(append(t.attrs, attribute.String("trigger", string(tr)))...)
		}
		for i, s := range core.RunStatuses {
			t.runs[i] = addOpts(append(t.attrs, attribute.String("status", string(s)))...)
		}
		t.task = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(t.attrs...))}
		return t
	}
	o.tasks.New = func(k core.Key) *taskState {
		t := &taskState{observe: metric.WithAttributes(attribute.String("group", k.Group), attribute.String("task", k.Task))}
		if cfg.noTaskLabel {
			k.Task = ""
		}
		t.series = o.series.Get(k.Group, k.Task)
		return t
	}
	o.groups.New = func(k core.Key) *groupSeries {
		g := attribute.String("group", k.Group)
		s := &groupSeries{
			group:  addOpts(g),
			record: []metric.RecordOption{metric.WithAttributes(g)},
			won:    addOpts(g, attribute.String("result", core.ClaimWon)),
			lost:   addOpts(g, attribute.String("result", core.ClaimLost)),
			stolen: addOpts(g, attribute.String("result", core.ClaimStolen)),
		}
		s.observe = metric.WithAttributes(g)
		for i, st := range core.NodeStates {
			s.states[i] = metric.WithAttributes(g, attribute.String("state", st))
		}
		s.live = s.states[0]
		return s
	}
	o.ops.New = func(k core.Key) *[]metric.RecordOption {
		r := []metric.RecordOption{metric.WithAttributes(attribute.String("group", k.Group), attribute.String("op", core.OpLabel(k.Task)))}
		return &r
	}
	return o, nil
}

func addOpts(kv ...attribute.KeyValue) []metric.AddOption {
	return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
}

// instruments creates the instruments and the gauge callback on m.
func (o *Observer) instruments(m metric.Meter) error {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, desc string, buckets []float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return h
	}
	o.fires = counter("easyjob.fires", "{fire}", "Fires started, by trigger (cron, manual, retry, misfire, chain).")
	o.runs = counter("easyjob.runs", "{run}", "Runs ended, by status (succeeded, failed, timed_out).")
	o.claims = counter("easyjob.claims", "{claim}", "Claims: won, lost to a peer, stolen (won past the steal threshold; also counted as won).")
	o.recoveries = counter("easyjob.recoveries", "{task}", "Tasks of dead nodes recovered by this replica.")
	o.misfires = counter("easyjob.misfires", "{fire}", "Fires found late past their misfire threshold, by the policy applied.")
	o.handovers = counter("easyjob.handovers", "{claim}", "Claims handed to a peer by a finish (the strategy moved the task).")
	o.hbFailures = counter("easyjob.heartbeat_failures", "{heartbeat}", "Heartbeats that could not be written.")
	o.lag = histogram("easyjob.start_lag", "Start minus scheduled time of every fire (database clock; a chain child counts from its parent's scheduled time).", core.LagBuckets)
	runBuckets := core.RunBuckets
	if o.cfg.noDurationBuckets {
		runBuckets = runBuckets[len(runBuckets)-1:]
	}
	o.duration = histogram("easyjob.run_duration", "How long jobs ran.", runBuckets)
	o.recoveryDelay = histogram("easyjob.recovery_delay", "How long a recovered task had been due when this replica recovered it.", core.RecoveryBuckets)
	o.storeOps = histogram("easyjob.store_operation_duration", "Store calls by method in snake_case (listen: one LISTEN session).", core.StoreBuckets)

	nodes, err := m.Int64ObservableGauge("easyjob.nodes", metric.WithUnit("{node}"),
		metric.WithDescription("Nodes of the group by state (live, leaving, suspect, dead); without WithNodes only live, in this replica's view."))
	errs = append(errs, err)
	held, err := m.Int64ObservableGauge("easyjob.claims_held", metric.WithUnit("{claim}"), metric.WithDescription("Claims this replica holds (queued or running)."))
	errs = append(errs, err)
	busy, err := m.Int64ObservableGauge("easyjob.workers_busy", metric.WithUnit("{worker}"), metric.WithDescription("Jobs running on this replica."))
	errs = append(errs, err)
	last, err := m.Float64ObservableGauge("easyjob.task_last_success_timestamp", metric.WithUnit("s"),
		metric.WithDescription("When the task's last successful run on this replica ended (Unix time)."))
	errs = append(errs, err)
	interval, err := m.Float64ObservableGauge("easyjob.task_interval", metric.WithUnit("s"),
		metric.WithDescription("Longest gap between consecutive fires of the task's cron (a chain step: of its root's): the unit of a 'not succeeded within N intervals' alert."))
	errs = append(errs, err)
	build, err := m.Int64ObservableGauge("easyjob.build_info", metric.WithDescription("The easyjob version and Go version of this binary; always 1."))
	errs = append(errs, err)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	o.reg, err = m.RegisterCallback(func(ctx context.Context, ob metric.Observer) error {
		return o.observeGauges(ctx, ob, nodes, held, busy, last, interval, build)
	}, nodes, held, busy, last, interval, build)
	return err
}

// observeGauges reports the gauges at collection time.
func (o *Observer) observeGauges(ctx context.Context, ob metric.Observer, nodes, held, busy metric.Int64ObservableGauge,
	last, interval metric.Float64ObservableGauge, build metric.Int64ObservableGauge) error {
	counted := map[string]bool{}
	states, err := o.nodes.States(ctx)
	for _, g := range states {
		counted[g.Group] = true
		gs := o.groups.Get(g.Group, "")
		for i := range core.NodeStates {
			ob.ObserveInt64(nodes, int64(g.Counts[i]), gs.states[i])
		}
	}
	for _, g := range o.gauges.Groups() {
		gs := o.groups.Get(g.Group, "")
		if !counted[g.Group] {
			ob.ObserveInt64(nodes, int64(g.Live), gs.live)
		}
		ob.ObserveInt64(held, int64(g.Held), gs.observe)
		ob.ObserveInt64(busy, int64(g.Busy), gs.observe)
	}
	o.sweep()
	if !o.cfg.noTaskGauges {
		o.tasks.Each(func(_ core.Key, t *taskState) {
			if v, ok := t.LastSuccess(); ok {
				ob.ObserveFloat64(last, v, t.observe)
			}
			if d, ok := t.Interval(); ok {
				ob.ObserveFloat64(interval, d.Seconds(), t.observe)
			}
		})
	}
	ob.ObserveInt64(build, 1, o.build)
	if err != nil {
		return fmt.Errorf("otel: read nodes: %w", err)
	}
	return nil
}

// Close unregisters the gauge callback. The Observer must not be used
// after.
func (o *Observer) Close() error {
	if o.reg == nil {
		return nil
	}
	return o.reg.Unregister()
}

// Observe implements observe.Observer.
func (o *Observer) Observe(e observe.Event) {
	ctx := context.Background()
	switch e.Kind {
	case observe.EventFire:
		t := o.tasks.Get(e.Group, e.Task)
		if i := core.TriggerIndex(e.Trigger); i >= 0 {
			o.fires.Add(ctx, 1, t.series.fires[i]...)
		} else {
			o.fires.Add(ctx, 1, metric.WithAttributes(append(t.series.attrs, attribute.String("trigger", string(e.Trigger)))...))
		}
		t.Fired(e)
		o.lag.Record(ctx, e.Lag.Seconds(), o.groups.Get(e.Group, "").record...)
	case observe.EventRunEnd:
		t := o.tasks.Get(e.Group, e.Task)
		if i := core.StatusIndex(e.Status); i >= 0 {
			o.runs.Add(ctx, 1, t.series.runs[i]...)
		} else {
			o.runs.Add(ctx, 1, metric.WithAttributes(append(t.series.attrs, attribute.String("status", string(e.Status)))...))
		}
		o.duration.Record(ctx, e.Duration.Seconds(), t.series.task...)
		t.Ended(e)
	case observe.EventClaim:
		g := o.groups.Get(e.Group, "")
		o.claims.Add(ctx, int64(e.Count), g.won...)
		o.claims.Add(ctx, int64(e.Lost), g.lost...)
		o.claims.Add(ctx, int64(e.Stolen), g.stolen...)
	case observe.EventRecovery:
		g := o.groups.Get(e.Group, "")
		o.recoveries.Add(ctx, int64(max(e.Count, 1)), g.group...)
		o.recoveryDelay.Record(ctx, e.Lag.Seconds(), g.record...)
	case observe.EventMisfire:
		o.misfires.Add(ctx, 1, metric.WithAttributes(append(o.tasks.Get(e.Group, e.Task).series.attrs, attribute.String("policy", string(e.Misfire)))...))
	case observe.EventHandover:
		o.handovers.Add(ctx, 1, o.groups.Get(e.Group, "").group...)
	case observe.EventHeartbeatFailed:
		o.hbFailures.Add(ctx, 1, o.groups.Get(e.Group, "").group...)
	case observe.EventGauges:
		o.gauges.Set(e)
	case observe.EventStoreOp:
		o.storeOps.Record(ctx, e.Duration.Seconds(), *o.ops.Get(e.Group, e.Op)...)
	case observe.EventTaskRemoved:
		o.forget(e.Group, e.Task)
	}
}

// forget stops reporting (group, task): its gauges go at the next
// collection. The SDK keeps the cumulative series of its counters and
// histogram (it has no way to delete one); with the task label, the next
// event of the task reuses them.
func (o *Observer) forget(group, task string) {
	o.tasks.Delete(group, task)
	if !o.cfg.noTaskLabel {
		o.series.Delete(group, task)
	}
}

// sweep forgets the tasks idle past the TTL (WithTaskTTL).
func (o *Observer) sweep() {
	for _, k := range core.Idle(&o.tasks, o.cfg.taskTTL, func(t *taskState) *core.TaskState { return &t.TaskState }) {
		o.forget(k.Group, k.Task)
	}
}

// StartRun implements observe.RunObserver: one span per run, named after
// the task, following the FaaS conventions for timer triggers
// (faas.trigger=timer, faas.cron, faas.time = the scheduled time). A
// root run starts a new trace (Run's context may carry a span of its
// own, which would otherwise parent every run); a chain child's span is
// a child of its parent's run.
func (o *Observer) StartRun(ctx context.Context, r observe.RunInfo) (context.Context, func(observe.RunResult)) {
	attrs := []attribute.KeyValue{
		semconv.FaaSTriggerTimer,
		semconv.FaaSTime(r.Scheduled.UTC().Format(time.RFC3339Nano)),
		KeyGroup.String(r.Group),
		KeyTask.String(r.Task),
		KeyNode.Int64(r.Node),
		KeyAttempt.Int(r.Attempt),
		KeyTrigger.String(string(r.Trigger)),
	}
	if r.Cron != "" {
		attrs = append(attrs, semconv.FaaSCron(r.Cron))
	}
	if r.Misfire != "" {
		attrs = append(attrs, KeyMisfire.String(string(r.Misfire)))
	}
	opts := []trace.SpanStartOption{trace.WithAttributes(attrs...)}
	if r.Trigger == observe.TriggerChain {
		opts = append(opts, trace.WithSpanKind(trace.SpanKindInternal))
	} else {
		opts = append(opts, trace.WithSpanKind(trace.SpanKindServer), trace.WithNewRoot())
	}
	ctx, span := o.tracer.Start(ctx, r.Task, opts...)
	if !o.cfg.noTaskGauges {
		ctx = o.tasks.Get(r.Group, r.Task).Chain.StartRun(ctx, r) // a chain step's interval is its root's
	}
	return ctx, func(res observe.RunResult) {
		span.SetAttributes(KeyStatus.String(string(res.Status)))
		if res.Status != repository.ExecSucceeded && res.Status != repository.ExecSkipped {
			span.SetAttributes(semconv.ErrorTypeKey.String(string(res.Status)))
			if res.Err != nil {
				span.RecordError(res.Err)
				span.SetStatus(codes.Error, res.Err.Error())
			} else {
				span.SetStatus(codes.Error, string(res.Status))
			}
		}
		span.End()
	}
}

var _ observe.RunObserver = (*Observer)(nil)
