package prom_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/easyjob-go/easyjob/easyjob/metrics/prom"
	"github.com/easyjob-go/easyjob/easyjob/observe"
)

// storeMethods are the store methods a node calls (the runtime contract
// and Listen): one easyjob_store_operation_duration_seconds series set
// each.
var storeMethods = []string{
	"Calendars", "CancelsSince", "ChainRun", "Claim", "DeleteNode", "DueTasks", "EndRun", "ExpireNodes",
	"Finish", "Handlers", "Heartbeat", "HeldBy", "Listen", "LiveNodes", "MarkStale", "Nodes", "Now",
	"Orphans", "PruneHistory", "PublishHandlers", "PublishTaskSet", "RecoverAll", "RegisterNode",
	"RegisteredTasks", "Release", "RemoveTask", "StartExecution", "StartExecutions", "Task", "TaskSet",
	"Tasks", "UpsertTasks",
}

// replica feeds o what one replica of a group reports once it has fired
// and run each of tasks tasks (every minute, succeeded), called each
// store method and done each group-level thing once.
func replica(o *prom.Observer, group string, tasks int) {
	now := time.Now()
	for i := range tasks {
		task := fmt.Sprintf("task-%05d", i)
		o.Observe(observe.Event{Kind: observe.EventFire, Group: group, Task: task, Cron: "* * * * *", Trigger: observe.TriggerCron, Lag: time.Millisecond})
		o.Observe(observe.Event{Kind: observe.EventRunEnd, Group: group, Task: task, Status: "succeeded", Duration: time.Millisecond, At: now})
	}
	for _, op := range storeMethods {
		o.Observe(observe.Event{Kind: observe.EventStoreOp, Group: group, Op: op, Duration: time.Millisecond})
	}
	for _, e := range []observe.Event{
		{Kind: observe.EventClaim, Count: 1, Lost: 1, Stolen: 1},
		{Kind: observe.EventRecovery, Count: 1, Lag: time.Second},
		{Kind: observe.EventHandover},
		{Kind: observe.EventHeartbeatFailed},
		{Kind: observe.EventGauges, Node: 1, Held: 1, Busy: 1, Live: 10},
	} {
		e.Group = group
		o.Observe(e)
	}
}

// series counts the series of g as a scrape shows them: a histogram's
// buckets (+Inf included), _sum and _count, a summary's quantiles, _sum
// and _count, one for a counter or gauge.
func series(t testing.TB, g prometheus.Gatherer) (n int, by map[string]int) {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	by = map[string]int{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			k := 1
			switch mf.GetType() {
			case dto.MetricType_HISTOGRAM:
				k = len(m.GetHistogram().GetBucket()) + 1 + 2 // + the +Inf bucket, _sum, _count
			case dto.MetricType_SUMMARY:
				k = len(m.GetSummary().GetQuantile()) + 2
			}
			n += k
			by[mf.GetName()] += k
		}
	}
	return n, by
}

// optionSets are the series budgets documented in the README and
// docs/benchmarks.md, with their series per task and replica.
var optionSets = []struct {
	name    string
	opts    []prom.Option
	perTask int
}{
	{"default", nil, 20},
	{"WithoutDurationBuckets", []prom.Option{prom.WithoutDurationBuckets()}, 7},
	{"WithoutTaskLabel", []prom.Option{prom.WithoutTaskLabel()}, 2},
	{"WithoutTaskLabel, WithoutTaskGauges", []prom.Option{prom.WithoutTaskLabel(), prom.WithoutTaskGauges()}, 0},
	{"all three", []prom.Option{prom.WithoutTaskLabel(), prom.WithoutTaskGauges(), prom.WithoutDurationBuckets()}, 0},
}

// TestSeriesCount registers the series of a group of 10 000 tasks on one
// replica under each option set and counts them; ten replicas that each
// ran every task (the default strategy, over time) export ten times as
// many. It logs the table recorded in the README and docs/benchmarks.md.
func TestSeriesCount(t *testing.T) {
	const tasks, replicas = 10_000, 10
	var table strings.Builder
	fmt.Fprintf(&table, "| options | series per task | per group | per replica, %d tasks | %d tasks × %d replicas |\n|---|---|---|---|---|\n", tasks, tasks, replicas)
	for _, set := range optionSets {
		count := func(n int) int {
			reg := prometheus.NewRegistry()
			o, err := prom.New(reg, set.opts...)
			if err != nil {
				t.Fatal(err)
			}
			replica(o, "g", n)
			c, _ := series(t, reg)
			return c
		}
		one, two, all := count(1), count(2), count(tasks)
		per := two - one
		fixed := one - per // the group's series, whatever its tasks
		if per != set.perTask {
			t.Errorf("%s: %d series per task, want %d", set.name, per, set.perTask)
		}
		if all != fixed+tasks*per {
			t.Errorf("%s: %d series for %d tasks, want %d + %d × %d", set.name, all, tasks, fixed, tasks, per)
		}
		fmt.Fprintf(&table, "| %s | %d | %d | %d | %d |\n", set.name, per, fixed, all, replicas*all)
	}
	t.Logf("series of one group (%d store methods):\n%s", len(storeMethods), table.String())
}

func seriesOf(t *testing.T, g prometheus.Gatherer, task string) []string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if hasLabels(m, []string{"task", task}) {
				out = append(out, mf.GetName())
			}
		}
	}
	return out
}

// TestRemovedTaskSeriesGone: a task the node removed (EventTaskRemoved)
// loses every series; its neighbours keep theirs, and a task that fires
// again gets them back.
func TestRemovedTaskSeriesGone(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := prom.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"gone", "kept"} {
		o.Observe(observe.Event{Kind: observe.EventFire, Group: "g", Task: task, Cron: "* * * * * *", Trigger: observe.TriggerCron})
		o.Observe(observe.Event{Kind: observe.EventFire, Group: "g", Task: task, Trigger: "odd"})
		o.Observe(observe.Event{Kind: observe.EventMisfire, Group: "g", Task: task, Misfire: "skip"})
		o.Observe(observe.Event{Kind: observe.EventRunEnd, Group: "g", Task: task, Status: "succeeded", At: time.Now()})
		o.Observe(observe.Event{Kind: observe.EventRunEnd, Group: "g", Task: task, Status: "timed_out"})
	}
	before, _ := series(t, reg)
	kept := seriesOf(t, reg, "kept")
	if len(seriesOf(t, reg, "gone")) == 0 || len(kept) == 0 {
		t.Fatal("no series to remove")
	}
	o.Observe(observe.Event{Kind: observe.EventTaskRemoved, Group: "g", Task: "gone"})
	if got := seriesOf(t, reg, "gone"); len(got) > 0 {
		t.Errorf("series of a removed task left: %v", got)
	}
	if got := seriesOf(t, reg, "kept"); len(got) != len(kept) {
		t.Errorf("a neighbour's series %v, were %v", got, kept)
	}
	after, _ := series(t, reg)
	t.Logf("%d series before the removal, %d after", before, after)
	o.Observe(observe.Event{Kind: observe.EventFire, Group: "g", Task: "gone", Cron: "* * * * * *", Trigger: observe.TriggerCron})
	if len(seriesOf(t, reg, "gone")) == 0 {
		t.Error("a task firing again after its removal has no series")
	}
}

// TestTaskTTL: WithTaskTTL forgets a task idle for the TTL, but not one
// whose interval is longer (its dead-man alert fires first).
func TestTaskTTL(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := prom.New(reg, prom.WithTaskTTL(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	fire := func(task, cron string) {
		o.Observe(observe.Event{Kind: observe.EventFire, Group: "g", Task: task, Cron: cron, Trigger: observe.TriggerCron})
		o.Observe(observe.Event{Kind: observe.EventRunEnd, Group: "g", Task: task, Status: "succeeded", At: time.Now()})
	}
	fire("idle", "")            // no interval: the TTL alone
	fire("hourly", "0 * * * *") // 4 intervals: 4 h
	fire("busy", "")
	time.Sleep(100 * time.Millisecond)
	fire("busy", "")
	if _, err := reg.Gather(); err != nil { // a scrape sweeps
		t.Fatal(err)
	}
	if got := seriesOf(t, reg, "idle"); len(got) > 0 {
		t.Errorf("series of a task idle past the TTL: %v", got)
	}
	for _, task := range []string{"busy", "hourly"} {
		if len(seriesOf(t, reg, task)) == 0 {
			t.Errorf("%s lost its series", task)
		}
	}
}

// TestChainStepInterval: a chain step without a cron of its own gets its
// root's interval through the run's context, at every level; one with a
// cron of its own gets the longer of the two.
func TestChainStepInterval(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := prom.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, task, cron string, trigger observe.Trigger) context.Context {
		o.Observe(observe.Event{Kind: observe.EventFire, Group: "g", Task: task, Cron: cron, Trigger: trigger})
		ctx, end := o.StartRun(ctx, observe.RunInfo{Group: "g", Task: task, Cron: cron, Trigger: trigger})
		end(observe.RunResult{})
		return ctx
	}
	root := run(t.Context(), "root", "*/5 * * * *", observe.TriggerCron)
	child := run(root, "child", "", observe.TriggerChain)
	run(child, "grandchild", "", observe.TriggerChain)
	run(root, "gated", "* * * * * *", observe.TriggerChain)
	run(t.Context(), "orphan", "", observe.TriggerManual)
	for task, want := range map[string]float64{"root": 300, "child": 300, "grandchild": 300, "gated": 300} {
		if v, ok := value(t, reg, "easyjob_task_interval_seconds", "task", task); !ok || v != want {
			t.Errorf("interval of %s = %v (found %v), want %v", task, v, ok, want)
		}
	}
	if _, ok := value(t, reg, "easyjob_task_interval_seconds", "task", "orphan"); ok {
		t.Error("a task without a cron or a root has an interval")
	}
}

// TestOpLabels: the op label is the store method in snake_case.
func TestOpLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := prom.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"Finish", "CancelsSince", "StartExecutions", "DueTasks"} {
		o.Observe(observe.Event{Kind: observe.EventStoreOp, Group: "g", Op: op})
	}
	for _, op := range []string{"finish", "cancels_since", "start_executions", "due_tasks"} {
		if _, ok := value(t, reg, "easyjob_store_operation_duration_seconds", "op", op); !ok {
			t.Errorf("no series with op=%q", op)
		}
	}
}
