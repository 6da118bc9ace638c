package otel_test

import (
	"context"
	"errors"
	"log"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/metrics/otel"
)

// Trace every run and record the metrics with the OpenTelemetry SDK (add
// your exporters to the providers).
func Example() {
	if err := runTraced(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func runTraced(ctx context.Context) (err error) {
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider()
	defer func() { err = errors.Join(err, tp.Shutdown(ctx), mp.Shutdown(ctx)) }()

	obs, err := otel.New(otel.WithTracerProvider(tp), otel.WithMeterProvider(mp))
	if err != nil {
		return err
	}
	defer obs.Close()
	s, err := easyjob.New(easyjob.Config{DSN: "postgres://localhost/app", Observer: obs})
	if err != nil {
		return err
	}
	if err := s.Register("report", "0 * * * *", func(ctx context.Context) error {
		// ctx carries the run's span: spans started here are its children.
		return nil
	}); err != nil {
		return err
	}
	if err := s.Register("publish", "", func(context.Context) error { return nil }, easyjob.Parent("report")); err != nil {
		return err
	}
	return s.Run(ctx)
}
