package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/metrics/prom"
)

// scrapeEvery is how often a node run with --metrics renders its metrics
// (into io.Discard), as a Prometheus scrape would: the cost of metrics is
// the observer on the hot path plus the scrapes.
const scrapeEvery = 15 * time.Second

// withMetrics sets a Prometheus observer on cfg, on a private registry
// scraped every scrapeEvery until ctx ends, by a goroutine wg waits for.
func withMetrics(ctx context.Context, wg *sync.WaitGroup, cfg *easyjob.Config) error {
	reg := prometheus.NewRegistry()
	o, err := prom.New(reg)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	cfg.Observer = o
	wg.Go(func() {
		t := time.NewTicker(scrapeEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := scrape(reg, io.Discard); err != nil {
					fmt.Fprintf(os.Stderr, "easyjob: metrics scrape: %v\n", err)
				}
			}
		}
	})
	return nil
}

// scrape gathers reg and writes it in the text format, as /metrics does.
func scrape(reg *prometheus.Registry, w io.Writer) error {
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}
