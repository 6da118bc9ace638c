package harness

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/easyjob-go/easyjob/easyjob"
)

// TestMetricsFlag: --metrics reaches node processes and gives the node
// an observer whose metrics render as a scrape would.
func TestMetricsFlag(t *testing.T) {
	p := nodeParams{DSN: "postgres://x", Group: "g", Tasks: 1, Cron: "* * * * * *", Metrics: true}
	o := &nodeOpts{}
	fs := o.flagSet()
	if err := fs.Parse(p.args()); err != nil {
		t.Fatal(err)
	}
	if !o.params.Metrics || !slices.Contains(p.args(), "--metrics") {
		t.Fatalf("--metrics lost on the way to the node process: %v", p.args())
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	var cfg easyjob.Config
	if err := withMetrics(ctx, &wg, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Observer == nil {
		t.Fatal("no observer set")
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(prometheus.NewCounter(prometheus.CounterOpts{Name: "x_total", Help: "x"})); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := scrape(reg, &b); err != nil || !strings.Contains(b.String(), "x_total 0") {
		t.Fatalf("scrape: %v %q", err, b.String())
	}
}
