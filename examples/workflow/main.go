// Command workflow runs a small workflow every 5 seconds across its
// replicas, with no leader and no coordinator:
//
//	wf-a ──┬─> wf-b ──┬─> wf-d   (wf-d after both wf-b and wf-c)
//	       └─> wf-c ──┘
//	wf-shard: 4 shards, spread over the replicas
//	wf-all:   once on every replica (broadcast)
//
// wf-b and wf-c run in parallel, each claimed by whichever replica its
// strategy picks; the last of them to finish makes wf-d due; wf-d reads
// their results. Start it twice or more against one PostgreSQL database:
//
//	export EASYJOB_DSN=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
//	go run ./examples/workflow &
//	go run ./examples/workflow &
//	go run ./cmd/easyjob history wf-d --group workflow-example --json
//	go run ./cmd/easyjob history wf-shard --group workflow-example --json   # "shard": 0..3
//	go run ./cmd/easyjob history wf-all --group workflow-example --json     # one row per replica
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
		return fmt.Errorf("set EASYJOB_DSN to a PostgreSQL URL")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	s, err := easyjob.New(easyjob.Config{DSN: dsn, Group: "workflow-example", Logger: &logger})
	if err != nil {
		return err
	}
	for _, r := range []struct {
		name, cron string
		fn         easyjob.Func
		opts       []easyjob.Option
	}{
		{"wf-a", "*/5 * * * * *", load("wf-a"), nil},
		{"wf-b", "", load("wf-b"), []easyjob.Option{easyjob.Parents("wf-a")}},
		{"wf-c", "", load("wf-c"), []easyjob.Option{easyjob.Parents("wf-a")}},
		{"wf-d", "", merge, []easyjob.Option{easyjob.Parents("wf-b", "wf-c")}},
		{"wf-shard", "*/5 * * * * *", shard, []easyjob.Option{easyjob.Shards(4)}},
		{"wf-all", "*/5 * * * * *", local, []easyjob.Option{easyjob.Broadcast()}},
	} {
		if err := s.Register(r.name, r.cron, r.fn, r.opts...); err != nil {
			return err
		}
	}
	return s.Run(ctx)
}

// load stands for a step that loads something: it takes a moment and
// hands a row count to the steps after it.
func load(name string) easyjob.Func {
	return func(ctx context.Context) error {
		info, _ := easyjob.InfoFromContext(ctx)
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		easyjob.Logger(ctx).Info("loaded", "step", name, "node", info.NodeID, "fire", info.ScheduledAt)
		return easyjob.SetResult(ctx, map[string]int{"rows": 100})
	}
}

// merge runs after wf-b and wf-c, with what each loaded.
func merge(ctx context.Context) error {
	in, err := easyjob.ParentResults(ctx)
	if err != nil {
		return err
	}
	info, _ := easyjob.InfoFromContext(ctx)
	easyjob.Logger(ctx).Info("merged", "node", info.NodeID, "fire", info.ScheduledAt, "from", len(in))
	return nil
}

// shard works on its quarter of the data.
func shard(ctx context.Context) error {
	info, _ := easyjob.InfoFromContext(ctx)
	easyjob.Logger(ctx).Info("shard", "shard", info.Shard, "of", info.Shards, "node", info.NodeID)
	return nil
}

// local clears something every replica keeps for itself.
func local(ctx context.Context) error {
	info, _ := easyjob.InfoFromContext(ctx)
	easyjob.Logger(ctx).Info("local cache cleared", "node", info.NodeID)
	return nil
}
