package prom_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/easyjob-go/easyjob/easyjob"
	mt "github.com/easyjob-go/easyjob/easyjob/metrics/internal/metricstest"
	"github.com/easyjob-go/easyjob/easyjob/metrics/prom"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

func TestMain(m *testing.M) {
	mt.ChildMain()
	pgtest.Main(m)
}

// value returns the value of the series of name whose labels include
// want (a counter's or gauge's value, a histogram's count), summed over
// the matching series, and whether any matched.
func value(t *testing.T, g prometheus.Gatherer, name string, want ...string) (float64, bool) {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum, found := 0.0, false
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !hasLabels(m, want) {
				continue
			}
			found = true
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return sum, found
}

func hasLabels(m *dto.Metric, want []string) bool {
	for i := 0; i+1 < len(want); i += 2 {
		if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == want[i] && l.GetValue() == want[i+1] }) {
			return false
		}
	}
	return true
}

// expected renders the counter name in the text format, for
// testutil.GatherAndCompare: one series per (task, label value) counted,
// and for the values in always at zero when not counted.
func expected(name, help, group, label string, tasks, values, always []string, count map[mt.Key]int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
	for _, task := range tasks {
		for _, v := range values {
			if count[mt.Key{Task: task, Label: v}] == 0 && !slices.Contains(always, v) {
				continue
			}
			pairs := []string{fmt.Sprintf("group=%q", group), fmt.Sprintf("%s=%q", label, v), fmt.Sprintf("task=%q", task)}
			slices.Sort(pairs) // the text format's label order
			fmt.Fprintf(&b, "%s{%s} %d\n", name, strings.Join(pairs, ","), count[mt.Key{Task: task, Label: v}])
		}
	}
	return b.String()
}

// setup returns a node configuration on dsn's database for a group of
// t's own with strategy, a client of the group, and a registry holding an
// Observer (set in the configuration) that reads the group's nodes
// through the client.
func setup(t *testing.T, dsn, strategy string) (easyjob.Config, *easyjob.Client, *prometheus.Registry) {
	t.Helper()
	cfg := mt.Config(pgtest.OpenStore(t, dsn), mt.Group(t))
	cfg.Strategy = strategy
	client := mt.Client(t, cfg)
	reg := prometheus.NewRegistry()
	o, err := prom.New(reg, prom.WithNodes(client))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Observer = o
	return cfg, client, reg
}

// TestMetricsMatchHistory runs two nodes on PostgreSQL with one Observer,
// stops them, and reads the metrics back: the fire and run counters
// equal the execution history, series by series, and the lag histogram
// holds every fire.
func TestMetricsMatchHistory(t *testing.T) {
	cfg, client, reg := setup(t, pgtest.SharedDatabase(t), "")
	tasks := []string{"bad", "child", "ok", "parent"} // sorted, as the expected text
	register := func(s *easyjob.Scheduler) error {
		ok := func(context.Context) error { return nil }
		return errors.Join(
			s.Register("ok", "* * * * * *", ok),
			s.Register("bad", "* * * * * *", func(context.Context) error { return errors.New("boom") }),
			s.Register("parent", "* * * * * *", ok),
			s.Register("child", "", ok, easyjob.Parent("parent")),
		)
	}
	nodes := []*mt.Node{mt.Start(t.Context(), t, cfg, register), mt.Start(t.Context(), t, cfg, register)}
	mt.Eventually(t, 10*time.Second, "2 live nodes in easyjob_nodes", func() bool {
		v, _ := value(t, reg, "easyjob_nodes", "group", cfg.Group, "state", "live")
		return v == 2
	})
	mt.Eventually(t, 20*time.Second, "3 runs of every task", func() bool {
		h := mt.ReadHistory(t, client, tasks...)
		return slices.IndexFunc(tasks, func(task string) bool { return h.Runs[task] < 3 }) < 0
	})
	// Gauges come with heartbeats: check them while the nodes run.
	if _, ok := value(t, reg, "easyjob_claims_held", "group", cfg.Group); !ok {
		t.Error("easyjob_claims_held missing")
	}
	if _, ok := value(t, reg, "easyjob_workers_busy", "group", cfg.Group); !ok {
		t.Error("easyjob_workers_busy missing")
	}
	for _, n := range nodes {
		n.Stop(t)
	}
	h := mt.ReadHistory(t, client, tasks...)
	t.Logf("history: %d runs %v", h.Total, h.ByStatus)

	statuses := []string{"failed", "succeeded", "timed_out"}
	runs := expected("easyjob_runs_total", "Runs ended, by status (succeeded, failed, timed_out).", cfg.Group, "status", tasks, statuses, []string{"failed", "succeeded"}, h.ByStatus)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(runs), "easyjob_runs_total"); err != nil {
		t.Errorf("runs vs history: %v", err)
	}
	triggers := []string{"chain", "cron", "misfire", "retry"}
	fires := expected("easyjob_fires_total", "Fires started, by trigger (cron, manual, retry, misfire, chain).", cfg.Group, "trigger", tasks, triggers, nil, h.ByTrigger)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fires), "easyjob_fires_total"); err != nil {
		t.Errorf("fires vs history: %v", err)
	}
	// The lag histogram holds every fire, each within its 60 s bucket.
	if n, _ := value(t, reg, "easyjob_start_lag_seconds", "group", cfg.Group); n != float64(h.Total) {
		t.Errorf("lag histogram count %v, history %d", n, h.Total)
	}
	if n, _ := value(t, reg, "easyjob_run_duration_seconds", "group", cfg.Group); n != float64(h.Total) {
		t.Errorf("run duration count %v, history %d", n, h.Total)
	}
	// The last success is the newest succeeded run's end (local vs
	// database clock: within a second); a task that never succeeded has
	// no series.
	for _, task := range []string{"ok", "parent", "child"} {
		v, ok := value(t, reg, "easyjob_task_last_success_timestamp_seconds", "group", cfg.Group, "task", task)
		want := float64(h.LastSuccess[task].UnixNano()) / 1e9
		if !ok || math.Abs(v-want) > 1 {
			t.Errorf("last success of %s = %v (found %v), history %v", task, v, ok, want)
		}
	}
	if _, ok := value(t, reg, "easyjob_task_last_success_timestamp_seconds", "task", "bad"); ok {
		t.Error("a task that never succeeded has a last success")
	}
	if v, _ := value(t, reg, "easyjob_task_interval_seconds", "group", cfg.Group, "task", "ok"); v != 1 {
		t.Errorf("interval of an every-second task = %v", v)
	}
	// A chain step without a cron has its root's interval: the dead-man
	// alert covers it.
	if v, _ := value(t, reg, "easyjob_task_interval_seconds", "group", cfg.Group, "task", "child"); v != 1 {
		t.Errorf("interval of a chain step of an every-second root = %v", v)
	}
	// Short runs have no start record (their finish appends them); the
	// chain's child records its start on its own (StartExecution).
	for _, op := range []string{"register_node", "heartbeat", "due_tasks", "claim", "start_execution", "finish", "delete_node"} {
		if n, _ := value(t, reg, "easyjob_store_operation_duration_seconds", "group", cfg.Group, "op", op); n == 0 {
			t.Errorf("no %s store operation observed", op)
		}
	}
	if n, _ := value(t, reg, "easyjob_claims_total", "group", cfg.Group, "result", "won"); n == 0 {
		t.Error("no claim won")
	}
	if v, ok := value(t, reg, "easyjob_build_info"); !ok || v != 1 {
		t.Errorf("build_info = %v (found %v)", v, ok)
	}
	// Both rows deleted at shutdown: no node in any state.
	mt.Eventually(t, 5*time.Second, "no node left", func() bool {
		v, ok := value(t, reg, "easyjob_nodes", "group", cfg.Group)
		return ok && v == 0
	})
	// No gauge is named _total.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasSuffix(mf.GetName(), "_total") != (mf.GetType() == dto.MetricType_COUNTER) {
			t.Errorf("%s is a %v", mf.GetName(), mf.GetType())
		}
	}
}

// TestRecoveryOnSurvivor kills a peer process (SIGKILL) holding claims:
// the survivor recovers every one of them, and counts exactly those.
func TestRecoveryOnSurvivor(t *testing.T) {
	dsn := pgtest.SharedDatabase(t)
	cfg, client, reg := setup(t, dsn, "id_hash") // the tasks split between the two nodes
	tasks := []string{"t0", "t1", "t2", "t3", "t4", "t5"}
	mt.Start(t.Context(), t, cfg, func(s *easyjob.Scheduler) error { return mt.RegisterTasks(s, tasks...) })
	child := mt.StartChild(t, dsn, cfg.Group, cfg.Strategy, tasks...)
	var victim int64
	mt.Eventually(t, 20*time.Second, "the child holding claims", func() bool {
		if victim == 0 {
			victim = mt.NodeID(t, client, mt.ChildName)
		}
		return victim != 0 && mt.HeldBy(t, client, victim) > 0
	})
	mt.Kill(t, child)
	held := mt.HeldBy(t, client, victim) // frozen: its node is gone
	if held == 0 {
		t.Fatal("the child held nothing when killed")
	}
	mt.Eventually(t, 20*time.Second, "every claim of the killed child recovered", func() bool {
		return mt.HeldBy(t, client, victim) == 0
	})
	got, _ := value(t, reg, "easyjob_recoveries_total", "group", cfg.Group)
	if got != float64(held) {
		t.Errorf("easyjob_recoveries_total = %v, the child held %d", got, held)
	}
	if n, _ := value(t, reg, "easyjob_recovery_delay_seconds", "group", cfg.Group); n != float64(held) {
		t.Errorf("recovery delay count %v, want %d", n, held)
	}
	mt.Eventually(t, 10*time.Second, "the child dead in easyjob_nodes", func() bool {
		dead, _ := value(t, reg, "easyjob_nodes", "group", cfg.Group, "state", "dead")
		live, _ := value(t, reg, "easyjob_nodes", "group", cfg.Group, "state", "live")
		return dead == 1 && live == 1
	})
}

func TestNewBadInput(t *testing.T) {
	if _, err := prom.New(nil); !errors.Is(err, prom.ErrNilRegisterer) {
		t.Fatalf("nil registry: %v", err)
	}
	var none *prometheus.Registry
	if _, err := prom.New(none); !errors.Is(err, prom.ErrNilRegisterer) {
		t.Fatalf("nil *Registry: %v", err)
	}
	reg := prometheus.NewRegistry()
	if _, err := prom.New(reg); err != nil {
		t.Fatal(err)
	}
	_, err := prom.New(reg)
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) || !strings.Contains(err.Error(), "one Observer per registry") {
		t.Fatalf("second Observer on one registry: %v", err)
	}
	// A registry that holds a foreign metric of one of our names: an
	// error, and none of ours registered.
	reg = prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "easyjob_runs_total", Help: "not ours"}))
	if _, err := prom.New(reg); err == nil {
		t.Fatal("a clashing metric name was accepted")
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 1 {
		t.Fatalf("after a failed New the registry holds %d series (%v), want only the foreign one", n, err)
	}
}

// TestObserveAllocs: once a task and a group have been seen, observing
// allocates nothing.
func TestObserveAllocs(t *testing.T) {
	o, err := prom.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	events := []observe.Event{
		{Kind: observe.EventFire, Group: "g", Task: "t", Cron: "* * * * * *", Trigger: observe.TriggerCron, Lag: time.Millisecond},
		{Kind: observe.EventRunEnd, Group: "g", Task: "t", Status: "succeeded", Duration: time.Millisecond, At: time.Now()},
		{Kind: observe.EventClaim, Group: "g", Count: 2, Lost: 1},
		{Kind: observe.EventStoreOp, Group: "g", Op: "Claim", Duration: time.Millisecond},
	}
	for _, e := range events {
		o.Observe(e)
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, e := range events {
			o.Observe(e)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per round of events", n)
	}
}

// BenchmarkObserveFire is the observer's cost per fire: its start and
// its end (a fire's share of store calls is far below one).
func BenchmarkObserveFire(b *testing.B) {
	o, err := prom.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	tasks := make([]string, 1000)
	for i := range tasks {
		tasks[i] = fmt.Sprintf("t%05d", i)
	}
	now := time.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			task := tasks[i%len(tasks)]
			i++
			o.Observe(observe.Event{Kind: observe.EventFire, Group: "g", Task: task, Cron: "* * * * * *", Trigger: observe.TriggerCron, Lag: 3 * time.Millisecond})
			o.Observe(observe.Event{Kind: observe.EventRunEnd, Group: "g", Task: task, Status: "succeeded", Duration: time.Millisecond, At: now})
		}
	})
}
