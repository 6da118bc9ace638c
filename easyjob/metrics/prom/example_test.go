package prom_test

import (
	"context"
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/metrics/prom"
)

// A service that exposes its scheduler's metrics and health on :9464.
func Example() {
	if err := serveMetrics(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func serveMetrics(ctx context.Context) error {
	cfg := easyjob.Config{DSN: "postgres://localhost/app", Group: "billing"}
	// Optional: easyjob_nodes{state} from the node table at scrape time.
	client, err := easyjob.NewClient(ctx, cfg)
	if err != nil {
		return err
	}
	defer client.Close()

	reg := prometheus.NewRegistry()
	obs, err := prom.New(reg, prom.WithNodes(client))
	if err != nil {
		return err
	}
	cfg.Observer = obs
	s, err := easyjob.New(cfg)
	if err != nil {
		return err
	}
	if err := s.Register("invoice", "*/5 * * * *", func(context.Context) error { return nil }); err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/livez", s.HealthHandler())
	mux.Handle("/readyz", s.HealthHandler())
	go func() { log.Println(http.ListenAndServe("127.0.0.1:9464", mux)) }()

	return s.Run(ctx)
}
