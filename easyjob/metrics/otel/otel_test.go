package otel_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/easyjob-go/easyjob/easyjob"
	mt "github.com/easyjob-go/easyjob/easyjob/metrics/internal/metricstest"
	"github.com/easyjob-go/easyjob/easyjob/metrics/otel"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func attr(s tracetest.SpanStub, k attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestSpansAndMetrics runs a chain parent → child → grandchild and a
// failing task on PostgreSQL, then checks one span per execution in the
// history, chained parent/child, with the FaaS timer attributes, and the
// OTel metrics against the history.
func TestSpansAndMetrics(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	store := pgtest.OpenStore(t, pgtest.SharedDatabase(t))
	cfg := mt.Config(store, mt.Group(t))
	client := mt.Client(t, cfg)
	o, err := otel.New(otel.WithTracerProvider(tp), otel.WithMeterProvider(mp), otel.WithNodes(client))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = o.Close() }()
	cfg.Observer = o
	tasks := []string{"bad", "child", "grandchild", "parent"}
	// Run's context carries a span of the application's: runs must not
	// become its children.
	appCtx, app := tp.Tracer("app").Start(t.Context(), "app")
	defer app.End()
	n := mt.Start(appCtx, t, cfg, func(s *easyjob.Scheduler) error {
		ok := func(context.Context) error { return nil }
		return errors.Join(
			s.Register("parent", "* * * * * *", ok),
			s.Register("child", "", ok, easyjob.Parent("parent")),
			s.Register("grandchild", "", ok, easyjob.Parent("child")),
			s.Register("bad", "* * * * * *", func(context.Context) error { return errors.New("boom") }),
		)
	})
	mt.Eventually(t, 20*time.Second, "2 runs of every task", func() bool {
		h := mt.ReadHistory(t, client, tasks...)
		return slices.IndexFunc(tasks, func(task string) bool { return h.Runs[task] < 2 }) < 0
	})
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	if v, ok := gaugeValue(rm, "easyjob.nodes", "group", cfg.Group, "state", "live"); !ok || v != 1 {
		t.Errorf("easyjob.nodes live = %v (found %v)", v, ok)
	}
	n.Stop(t)
	h := mt.ReadHistory(t, client, tasks...)

	spans := exp.GetSpans()
	byID := map[string]tracetest.SpanStub{}
	count := map[string]int{}
	for _, s := range spans {
		if s.Name == "app" {
			continue
		}
		byID[s.SpanContext.SpanID().String()] = s
		count[s.Name]++
	}
	t.Logf("spans by task %v, executions %v", count, h.Runs)
	for _, task := range tasks {
		if count[task] != h.Runs[task] {
			t.Errorf("%d spans of %s, %d executions", count[task], task, h.Runs[task])
		}
	}
	for _, s := range spans {
		if s.Name == "app" {
			continue
		}
		if v, _ := attr(s, "faas.trigger"); v.AsString() != "timer" {
			t.Errorf("%s: faas.trigger %q", s.Name, v.AsString())
		}
		ft, _ := attr(s, "faas.time")
		if _, err := time.Parse(time.RFC3339Nano, ft.AsString()); err != nil {
			t.Errorf("%s: faas.time %q: %v", s.Name, ft.AsString(), err)
		}
		cron, hasCron := attr(s, "faas.cron")
		parent, hasParent := byID[s.Parent.SpanID().String()]
		switch s.Name {
		case "parent", "bad":
			if s.Parent.IsValid() {
				t.Errorf("%s: root run has a parent span %v", s.Name, s.Parent.SpanID())
			}
			if !hasCron || cron.AsString() != "* * * * * *" {
				t.Errorf("%s: faas.cron %q", s.Name, cron.AsString())
			}
		case "child", "grandchild":
			want := map[string]string{"child": "parent", "grandchild": "child"}[s.Name]
			if !hasParent || parent.Name != want || parent.SpanContext.TraceID() != s.SpanContext.TraceID() {
				t.Errorf("%s: parent span %q (found %v), want %q in the same trace", s.Name, parent.Name, hasParent, want)
			}
			if hasCron {
				t.Errorf("%s: a child without a cron has faas.cron %q", s.Name, cron.AsString())
			}
			// faas.time is the parent's scheduled time.
			if pt, _ := attr(parent, "faas.time"); pt.AsString() != ft.AsString() {
				t.Errorf("%s: faas.time %s, parent's %s", s.Name, ft.AsString(), pt.AsString())
			}
		}
		status, _ := attr(s, otel.KeyStatus)
		if s.Name == "bad" {
			errType, _ := attr(s, "error.type")
			if status.AsString() != "failed" || s.Status.Code != codes.Error || s.Status.Description != "boom" || errType.AsString() != "failed" {
				t.Errorf("bad: status %q %v %q error.type %q", status.AsString(), s.Status.Code, s.Status.Description, errType.AsString())
			}
		} else if status.AsString() != "succeeded" || s.Status.Code == codes.Error {
			t.Errorf("%s: status %q %v", s.Name, status.AsString(), s.Status.Code)
		}
	}

	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	for k, want := range h.ByTrigger {
		if got := sumValue(rm, "easyjob.fires", "group", cfg.Group, "task", k.Task, "trigger", k.Label); got != int64(want) {
			t.Errorf("easyjob.fires{%s,%s} = %d, history %d", k.Task, k.Label, got, want)
		}
	}
	for k, want := range h.ByStatus {
		if got := sumValue(rm, "easyjob.runs", "group", cfg.Group, "task", k.Task, "status", k.Label); got != int64(want) {
			t.Errorf("easyjob.runs{%s,%s} = %d, history %d", k.Task, k.Label, got, want)
		}
	}
	if got := sumValue(rm, "easyjob.runs", "group", cfg.Group); got != int64(h.Total) {
		t.Errorf("easyjob.runs = %d in all, history %d", got, h.Total)
	}
	if got := histCount(rm, "easyjob.start_lag", "group", cfg.Group); got != uint64(h.Total) {
		t.Errorf("start lag count %d, history %d", got, h.Total)
	}
	if got := histCount(rm, "easyjob.store_operation_duration", "op", "heartbeat"); got == 0 {
		t.Error("no heartbeat store operation recorded")
	}
	if v, ok := gaugeValue(rm, "easyjob.task_last_success_timestamp", "task", "parent"); !ok || v < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("last success of parent %v (found %v)", v, ok)
	}
	if _, ok := gaugeValue(rm, "easyjob.task_last_success_timestamp", "task", "bad"); ok {
		t.Error("a task that never succeeded has a last success")
	}
	// A chain step's interval is its root's, through every level.
	for _, task := range []string{"bad", "child", "grandchild"} {
		if v, ok := gaugeValue(rm, "easyjob.task_interval", "task", task); !ok || v != 1 {
			t.Errorf("interval of %s = %v (found %v)", task, v, ok)
		}
	}
	if v, ok := gaugeValue(rm, "easyjob.build_info"); !ok || v != 1 {
		t.Errorf("build_info = %v (found %v)", v, ok)
	}
}

// points visits the data points of the instrument name whose attributes
// include want.
func points(rm metricdata.ResourceMetrics, name string, want []string, f func(any)) {
	match := func(set attribute.Set) bool {
		for i := 0; i+1 < len(want); i += 2 {
			if v, ok := set.Value(attribute.Key(want[i])); !ok || v.String() != want[i+1] {
				return false
			}
		}
		return true
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				visit(d.DataPoints, match, f)
			case metricdata.Gauge[int64]:
				visit(d.DataPoints, match, f)
			case metricdata.Gauge[float64]:
				visit(d.DataPoints, match, f)
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if match(p.Attributes) {
						f(p)
					}
				}
			}
		}
	}
}

func visit[N int64 | float64](ps []metricdata.DataPoint[N], match func(attribute.Set) bool, f func(any)) {
	for _, p := range ps {
		if match(p.Attributes) {
			f(p)
		}
	}
}

func sumValue(rm metricdata.ResourceMetrics, name string, want ...string) int64 {
	var sum int64
	points(rm, name, want, func(p any) { sum += p.(metricdata.DataPoint[int64]).Value })
	return sum
}

func histCount(rm metricdata.ResourceMetrics, name string, want ...string) uint64 {
	var n uint64
	points(rm, name, want, func(p any) { n += p.(metricdata.HistogramDataPoint[float64]).Count })
	return n
}

func gaugeValue(rm metricdata.ResourceMetrics, name string, want ...string) (float64, bool) {
	var v float64
	found := false
	points(rm, name, want, func(p any) {
		found = true
		switch p := p.(type) {
		case metricdata.DataPoint[int64]:
			v += float64(p.Value)
		case metricdata.DataPoint[float64]:
			v += p.Value
		}
	})
	return v, found
}

// TestNewDefaults: without providers (or with nil ones) the global
// providers are used, no-ops unless the application set its own; nothing
// panics.
func TestNewDefaults(t *testing.T) {
	o, err := otel.New(otel.WithTracerProvider(nil), otel.WithMeterProvider(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, end := o.StartRun(t.Context(), observe.RunInfo{Task: "t", Trigger: observe.TriggerCron, Scheduled: time.Now()})
	o.Observe(observe.Event{Kind: observe.EventFire, Group: "g", Task: "t", Trigger: "unknown"})
	o.Observe(observe.Event{Kind: observe.EventRunEnd, Group: "g", Task: "t", Status: "skipped"})
	end(observe.RunResult{Status: "failed"})
	if ctx == nil {
		t.Fatal("nil context")
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
}
