// Command cluster is a real service with the classic four-step chain:
// step1 fires every 10 seconds, then step2, step3 and step4 run after it,
// in order, on the same node. Start it several times against one
// PostgreSQL database and every fire runs exactly once on one of them;
// kill one and its peers take over within seconds.
//
//	export EASYJOB_DSN=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
//	go run ./examples/cluster &   # as many times as you like
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob"
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

	step := func(name string) easyjob.Func {
		return func(ctx context.Context) error {
			info, _ := easyjob.InfoFromContext(ctx)
			logger.Info().Str("step", name).Int64("node", info.NodeID).
				Time("fire", info.ScheduledAt).Str("token", info.Token.String()).Msg("run")
			return nil
		}
	}
	if err := easyjob.Register("step1", "*/10 * * * * *", step("step1"), easyjob.Timeout(5*time.Second)); err != nil {
		return err
	}
	if err := easyjob.Register("step2", "", step("step2"), easyjob.Parent("step1")); err != nil {
		return err
	}
	if err := easyjob.Register("step3", "", step("step3"), easyjob.Parent("step2")); err != nil {
		return err
	}
	if err := easyjob.Register("step4", "", step("step4"), easyjob.Parent("step3")); err != nil {
		return err
	}

	return easyjob.Run(ctx, easyjob.Config{DSN: dsn, Group: "cluster-example", Logger: &logger})
}
