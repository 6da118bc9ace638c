// Command dynamic is a node that registers no schedule of its own, only a
// handler kind: "echo", whose arguments are {"n": <integer>}. Schedules
// that run it are created, triggered and edited at runtime, from the CLI
// (or Client.Create), with no restart and no deploy:
//
//	export EASYJOB_DSN=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
//	go run ./examples/dynamic &
//	go run ./cmd/easyjob create e1 --group dynamic-example --handler echo --cron '* * * * * *' --args '{"n":1}'
//	go run ./cmd/easyjob trigger e1 --group dynamic-example --args '{"n":2}'
//	go run ./cmd/easyjob history e1 --group dynamic-example --json
//
// e1 then runs every second with n=1, and once with n=2; history shows
// each run's arguments and kind (cron, or manual for the trigger).
// Arguments that do not decode into the handler's type are refused before
// anything is written, naming the field:
//
//	go run ./cmd/easyjob create e2 --group dynamic-example --handler echo --cron '* * * * * *' --args '{"n":"x"}'
//
// Clean up with:
//
//	go run ./cmd/easyjob remove e1 --group dynamic-example
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

// echoArgs are the arguments of an echo run.
type echoArgs struct {
	N int `json:"n"`
}

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

	s, err := easyjob.New(easyjob.Config{DSN: dsn, Group: "dynamic-example", Logger: &logger})
	if err != nil {
		return err
	}
	echo := func(ctx context.Context, args echoArgs) error {
		// The run's kind (cron or manual) is not in Info: history has it.
		info, _ := easyjob.InfoFromContext(ctx)
		logger.Info().Str("task", info.Task).Int("n", args.N).
			Time("fire", info.ScheduledAt).Str("token", info.Token.String()).Msg("echo")
		return nil
	}
	if err := s.Handle("echo", easyjob.HandlerOf(echo)); err != nil {
		return err
	}
	return s.Run(ctx)
}
