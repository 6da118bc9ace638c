// Command cluster is a real service with the classic four-step chain:
// step1 fires every 10 seconds, then step2, step3 and step4 run after it,
// in order, on the same node. Start it several times against one
// PostgreSQL database and every fire runs exactly once on one of them;
// kill one and its peers take over within seconds.
//
//	export EASYJOB_DSN=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
//	go run ./examples/cluster &   # as many times as you like
//
// With EASYJOB_HTTP_ADDR set (e.g. 127.0.0.1:9464) it serves Prometheus
// metrics on /metrics and its health on /healthz (ready), /readyz and
// /livez:
//
//	EASYJOB_HTTP_ADDR=127.0.0.1:9464 go run ./examples/cluster &
//	curl -s 127.0.0.1:9464/metrics | grep ^easyjob_
//	curl -s 127.0.0.1:9464/healthz
//
// Each step logs through easyjob.Logger(ctx); its lines are kept with its
// run:
//
//	go run ./cmd/easyjob logs step1 --group cluster-example
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/metrics/prom"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run is main's body; it returns its error so that its defers run before
// main exits.
func run() error {
	logger := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.TimeOnly}).With().Timestamp().Logger()
	dsn := os.Getenv("EASYJOB_DSN")
	if dsn == "" {
		logger.Fatal().Msg("set EASYJOB_DSN to a PostgreSQL URL")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Each step logs through its context's logger: the lines are stored
	// with the run (easyjob logs step1 --group cluster-example, or the
	// dashboard's run page) and also printed here, with the task's name.
	step := func(name string) easyjob.Func {
		return func(ctx context.Context) error {
			info, _ := easyjob.InfoFromContext(ctx)
			easyjob.Logger(ctx).Info("run", "step", name, "node", info.NodeID,
				"fire", info.ScheduledAt, "token", info.Token.String())
			return nil
		}
	}
	cfg := easyjob.Config{DSN: dsn, Group: "cluster-example", Logger: &logger}
	addr := os.Getenv("EASYJOB_HTTP_ADDR")
	reg := prometheus.NewRegistry()
	if addr != "" {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		obs, err := prom.New(reg)
		if err != nil {
			return err
		}
		cfg.Observer = obs
	}
	s, err := easyjob.New(cfg)
	if err != nil {
		return err
	}
	if err := s.Register("step1", "*/10 * * * * *", step("step1"), easyjob.Timeout(5*time.Second)); err != nil {
		return err
	}
	if err := s.Register("step2", "", step("step2"), easyjob.Parent("step1")); err != nil {
		return err
	}
	if err := s.Register("step3", "", step("step3"), easyjob.Parent("step2")); err != nil {
		return err
	}
	if err := s.Register("step4", "", step("step4"), easyjob.Parent("step3")); err != nil {
		return err
	}
	if addr != "" {
		stopHTTP, err := serve(addr, reg, s)
		if err != nil {
			return err
		}
		defer stopHTTP()
		logger.Info().Str("addr", addr).Msg("serving /metrics, /healthz, /readyz, /livez")
	}
	return s.Run(ctx)
}

// serve exposes reg on /metrics and s's health on /healthz (ready),
// /readyz and /livez at addr until the returned stop is called.
func serve(addr string, reg *prometheus.Registry, s *easyjob.Scheduler) (stop func(), err error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	for _, path := range []string{"/healthz", "/readyz", "/livez"} {
		mux.Handle(path, s.HealthHandler())
	}
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on EASYJOB_HTTP_ADDR %s: %w", addr, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "http:", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}
