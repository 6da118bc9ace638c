package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// NodeCommand is the hidden subcommand that runs one node process. The
// harness starts node processes by re-executing its own binary with it,
// so that binary's command table must dispatch NodeCommand to Node.
const NodeCommand = "_node"

// nodeOpts is one node process: its parameters and where it reports.
type nodeOpts struct {
	params      nodeParams
	ledgerPath  string
	ledgerFlush time.Duration
	statsPath   string
	name        string
	logLevel    string
}

// Node is the hidden NodeCommand: one node on --dsn that records every
// fire in --ledger and its store counters in --stats (rewritten every
// second and at exit, so a SIGKILL loses at most a second of counts). It
// runs until ctx ends (SIGTERM or SIGINT), then shuts down gracefully. It
// returns the process exit status.
func Node(ctx context.Context, args []string) int {
	return execute(ctx, NodeCommand, &nodeOpts{}, args)
}

func (o *nodeOpts) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(NodeCommand, flag.ContinueOnError)
	fs.StringVar(&o.params.DSN, "dsn", "", "database (already migrated)")
	fs.StringVar(&o.params.Group, "group", "bench", "group")
	fs.IntVar(&o.params.Tasks, "tasks", 100, "number of tasks")
	fs.StringVar(&o.params.Handler, "handler", "", "register this handler kind (runtime schedules) instead of the tasks")
	addNodeFlags(fs, &o.params)
	fs.BoolVar(&o.params.DAG, "dag", false, "also register the DAG task set (chaos --dag)")
	fs.StringVar(&o.ledgerPath, "ledger", "", "append-only ledger file")
	fs.DurationVar(&o.ledgerFlush, "ledger-flush", 0, "buffer ledger lines and write them this often (0: one write per fire, kept by a SIGKILL)")
	fs.StringVar(&o.statsPath, "stats", "", "stats file (JSON)")
	fs.StringVar(&o.name, "name", "", "node name (default host:pid)")
	fs.StringVar(&o.logLevel, "log-level", "warn", "zerolog level of the node's log on stderr")
	return fs
}

func (o *nodeOpts) check(*flag.FlagSet) error {
	if o.params.DSN == "" || o.ledgerPath == "" {
		return errors.New("--dsn and --ledger are required")
	}
	return nil
}

// run runs the node until ctx ends.
func (o *nodeOpts) run(ctx context.Context) error {
	if o.params.GOMAXPROCS > 0 {
		runtime.GOMAXPROCS(o.params.GOMAXPROCS)
	}
	lvl, err := zerolog.ParseLevel(o.logLevel)
	if err != nil {
		lvl = zerolog.WarnLevel
	}
	log := zerolog.New(os.Stderr).Level(lvl).With().Timestamp().Int("pid", os.Getpid()).Logger()

	led, err := openFileLedger(o.ledgerPath, o.ledgerFlush)
	if err != nil {
		return err
	}
	defer led.close()
	pg, err := openRetrying(ctx, o.params.DSN, log)
	if err != nil {
		return err
	}
	store, counts := newCountingStore(pg)
	defer store.Close()

	cfg := o.params.config(o.name, &log)
	cfg.Store = store
	if o.params.Metrics {
		mctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer func() { stop(); wg.Wait() }()
		if err := withMetrics(mctx, &wg, &cfg); err != nil {
			return err
		}
	}
	s, err := easyjob.New(cfg)
	if err != nil {
		return err
	}
	if err := registerTasks(s, o.params, led); err != nil {
		return err
	}
	stopStats := writeStatsEverySecond(o.statsPath, counts)
	stopProfile, err := nodeProfiles()
	if err != nil {
		return err
	}
	defer stopProfile()
	runErr := s.Run(ctx)
	stopStats()
	if o.statsPath != "" {
		if err := writeStats(o.statsPath, processStats(counts, true)); err != nil {
			fmt.Fprintf(os.Stderr, "easyjob _node: stats: %v\n", err)
		}
	}
	return runErr
}

// writeStatsEverySecond rewrites the stats file at path every second
// until the returned stop is called (nothing when path is empty).
func writeStatsEverySecond(path string, counts *countingStore) (stop func()) {
	if path == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = writeStats(path, processStats(counts, false))
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// processStats is the stats file content of this node process now.
func processStats(counts *countingStore, exited bool) storeStats {
	st := counts.snapshot()
	st.Exited, st.PeakRSSBytes = exited, selfPeakRSS()
	return st
}

// selfPeakRSS returns VmHWM of this process in bytes (0 if unknown).
func selfPeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// openRetrying opens the node's pool, retrying while the server does not
// take the connection (down, or out of connections after a fault), as
// easyjob.Run does with a DSN: a node restarted during a fault waits for
// the database instead of exiting.
func openRetrying(ctx context.Context, dsn string, log zerolog.Logger) (*postgres.Store, error) {
	for attempt := 1; ; attempt++ {
		pg, err := postgres.Open(ctx, dsn)
		if err == nil || ctx.Err() != nil {
			return pg, err
		}
		if attempt == 1 {
			log.Warn().Err(err).Msg("easyjob _node: database not answering at start; retrying")
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(min(time.Duration(attempt)*250*time.Millisecond, 2*time.Second)):
		}
	}
}
