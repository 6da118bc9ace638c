package otel_test

import (
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/easyjob-go/easyjob/easyjob/metrics/otel"
	"github.com/easyjob-go/easyjob/easyjob/observe"
)

// collectWith feeds the events to an Observer with opts and collects.
func collectWith(t *testing.T, events []observe.Event, opts ...otel.Option) metricdata.ResourceMetrics {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(t.Context()) })
	o, err := otel.New(append(opts, otel.WithMeterProvider(mp))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	for _, e := range events {
		o.Observe(e)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func taskEvents(tasks ...string) []observe.Event {
	var out []observe.Event
	for _, task := range tasks {
		out = append(out,
			observe.Event{Kind: observe.EventFire, Group: "g", Task: task, Cron: "* * * * * *", Trigger: observe.TriggerCron},
			observe.Event{Kind: observe.EventRunEnd, Group: "g", Task: task, Status: "succeeded", At: time.Now()},
		)
	}
	return out
}

// TestScaleOptions: WithoutTaskLabel counts per group, WithoutTaskGauges
// drops the dead-man gauges, and a removed task's gauges go.
func TestScaleOptions(t *testing.T) {
	rm := collectWith(t, taskEvents("a", "b"), otel.WithoutTaskLabel())
	if got := sumValue(rm, "easyjob.runs", "group", "g", "status", "succeeded"); got != 2 {
		t.Errorf("runs of the group = %d, want 2", got)
	}
	if got := sumValue(rm, "easyjob.runs", "task", "a"); got != 0 {
		t.Errorf("WithoutTaskLabel: runs with a task attribute = %d", got)
	}
	if _, ok := gaugeValue(rm, "easyjob.task_interval", "task", "a"); !ok {
		t.Error("WithoutTaskLabel dropped the per-task interval")
	}

	rm = collectWith(t, taskEvents("a"), otel.WithoutTaskGauges())
	for _, name := range []string{"easyjob.task_interval", "easyjob.task_last_success_timestamp"} {
		if _, ok := gaugeValue(rm, name, "task", "a"); ok {
			t.Errorf("WithoutTaskGauges: %s reported", name)
		}
	}

	removed := append(taskEvents("gone", "kept"), observe.Event{Kind: observe.EventTaskRemoved, Group: "g", Task: "gone"})
	rm = collectWith(t, removed)
	if _, ok := gaugeValue(rm, "easyjob.task_last_success_timestamp", "task", "gone"); ok {
		t.Error("a removed task's last success reported")
	}
	if _, ok := gaugeValue(rm, "easyjob.task_last_success_timestamp", "task", "kept"); !ok {
		t.Error("a neighbour of a removed task lost its last success")
	}
}
