package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// nodeParams configures every node of a run, in-process or as a process.
// Zero durations and counts mean the library's defaults.
type nodeParams struct {
	DSN             string
	Group           string
	Tasks           int
	Cron            string
	Strategy        string
	Heartbeat       time.Duration
	DeadAfter       time.Duration
	RecoverInterval time.Duration
	Workers         int
	MaxClaims       int
}

// addRunFlags registers the flags bench and chaos share: the server, the
// number of tasks and the node tuning.
func addRunFlags(fs *flag.FlagSet, admin *string, p *nodeParams) {
	fs.StringVar(admin, "dsn", envDSN(), "PostgreSQL server (a database is created next to the one named; default $EASYJOB_DSN)")
	fs.IntVar(&p.Tasks, "tasks", 100, "tasks K")
	addNodeFlags(fs, p)
}

// addNodeFlags registers the node tuning flags shared by bench, chaos and _node.
func addNodeFlags(fs *flag.FlagSet, p *nodeParams) {
	fs.StringVar(&p.Cron, "cron", "* * * * * *", "cron expression of every task (6 fields: leading seconds)")
	fs.StringVar(&p.Strategy, "strategy", "", "claim strategy (default, id_hash, least_count, weight); empty = library default")
	fs.DurationVar(&p.Heartbeat, "heartbeat", 0, "Config.HeartbeatInterval (0 = library default, 1s)")
	fs.DurationVar(&p.DeadAfter, "dead-after", 0, "Config.DeadAfter (0 = library default, 3 heartbeats)")
	fs.DurationVar(&p.RecoverInterval, "recover-interval", 0, "Config.RecoverInterval (0 = library default, 1s)")
	fs.IntVar(&p.Workers, "workers", 0, "Config.Workers (0 = library default, 10)")
	fs.IntVar(&p.MaxClaims, "max-claims", 0, "Config.MaxClaims (0 = library default, 100 × workers)")
}

// effective returns the heartbeat, dead threshold and recover interval the
// nodes really use (the library defaults where unset).
func (p nodeParams) effective() (hb, dead, rec time.Duration) {
	hb, dead, rec = p.Heartbeat, p.DeadAfter, p.RecoverInterval
	if hb == 0 {
		hb = time.Second
	}
	if dead == 0 {
		dead = 3 * hb
	}
	if rec == 0 {
		rec = time.Second
	}
	return hb, dead, rec
}

// args renders p as _node flags.
func (p nodeParams) args() []string {
	a := []string{
		"--dsn", p.DSN, "--group", p.Group, "--tasks", strconv.Itoa(p.Tasks), "--cron", p.Cron,
	}
	if p.Strategy != "" {
		a = append(a, "--strategy", p.Strategy)
	}
	if p.Heartbeat != 0 {
		a = append(a, "--heartbeat", p.Heartbeat.String())
	}
	if p.DeadAfter != 0 {
		a = append(a, "--dead-after", p.DeadAfter.String())
	}
	if p.RecoverInterval != 0 {
		a = append(a, "--recover-interval", p.RecoverInterval.String())
	}
	if p.Workers != 0 {
		a = append(a, "--workers", strconv.Itoa(p.Workers))
	}
	if p.MaxClaims != 0 {
		a = append(a, "--max-claims", strconv.Itoa(p.MaxClaims))
	}
	return a
}

// config returns the easyjob.Config of one node.
func (p nodeParams) config(name string, log *zerolog.Logger) easyjob.Config {
	return easyjob.Config{
		SkipMigrate:       true, // the harness migrated the scratch database
		Group:             p.Group,
		NodeName:          name,
		Strategy:          p.Strategy,
		HeartbeatInterval: p.Heartbeat,
		DeadAfter:         p.DeadAfter,
		RecoverInterval:   p.RecoverInterval,
		Workers:           p.Workers,
		MaxClaims:         p.MaxClaims,
		Logger:            log,
	}
}

// taskName names bench task i.
func taskName(i int) string { return fmt.Sprintf("t%05d", i) }

// registerTasks registers the K bench tasks on s.
func registerTasks(s *easyjob.Scheduler, p nodeParams, l ledger) error {
	job := ledgerJob(l)
	for i := range p.Tasks {
		if err := s.Register(taskName(i), p.Cron, job); err != nil {
			return err
		}
	}
	return nil
}

// nodeMain is the hidden `_node` command: one node on --dsn that records
// every fire in --ledger and its store counters in --stats (rewritten every
// second and at exit, so a SIGKILL loses at most a second of counts). It
// runs until SIGTERM or SIGINT, then shuts down gracefully.
func nodeMain(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("_node", flag.ContinueOnError)
	var p nodeParams
	fs.StringVar(&p.DSN, "dsn", "", "database (already migrated)")
	fs.StringVar(&p.Group, "group", "bench", "group")
	fs.IntVar(&p.Tasks, "tasks", 100, "number of tasks")
	addNodeFlags(fs, &p)
	ledgerPath := fs.String("ledger", "", "append-only ledger file")
	statsPath := fs.String("stats", "", "stats file (JSON)")
	name := fs.String("name", "", "node name (default host:pid)")
	logLevel := fs.String("log-level", "warn", "zerolog level of the node's log on stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if p.DSN == "" || *ledgerPath == "" {
		fmt.Fprintln(os.Stderr, "easyjob _node: --dsn and --ledger are required")
		return 2
	}
	lvl, err := zerolog.ParseLevel(*logLevel)
	if err != nil {
		lvl = zerolog.WarnLevel
	}
	log := zerolog.New(os.Stderr).Level(lvl).With().Timestamp().Int("pid", os.Getpid()).Logger()

	led, err := openFileLedger(*ledgerPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "easyjob _node: %v\n", err)
		return 1
	}
	defer led.close()
	pg, err := postgres.Open(ctx, p.DSN)
	if err != nil {
		fmt.Fprintf(os.Stderr, "easyjob _node: %v\n", err)
		return 1
	}
	store, counts := newCountingStore(pg)
	defer store.Close()

	cfg := p.config(*name, &log)
	cfg.Store = store
	s, err := easyjob.New(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "easyjob _node: %v\n", err)
		return 1
	}
	if err := registerTasks(s, p, led); err != nil {
		fmt.Fprintf(os.Stderr, "easyjob _node: %v\n", err)
		return 1
	}

	var wg sync.WaitGroup
	statsCtx, stopStats := context.WithCancel(context.Background())
	if *statsPath != "" {
		wg.Go(func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-statsCtx.Done():
					return
				case <-t.C:
					st := counts.snapshot()
					st.PeakRSSBytes = selfPeakRSS()
					_ = writeStats(*statsPath, st)
				}
			}
		})
	}
	runErr := s.Run(ctx)
	stopStats()
	wg.Wait()
	if *statsPath != "" {
		st := counts.snapshot()
		st.Exited, st.PeakRSSBytes = true, selfPeakRSS()
		if err := writeStats(*statsPath, st); err != nil {
			fmt.Fprintf(os.Stderr, "easyjob _node: stats: %v\n", err)
		}
	}
	if runErr != nil {
		fmt.Fprintf(os.Stderr, "easyjob _node: %v\n", runErr)
		return 1
	}
	return 0
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

// writeStats replaces path atomically with st as JSON.
func writeStats(path string, st storeStats) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readStats reads a stats file; ok is false when there is none yet.
func readStats(path string) (storeStats, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return storeStats{}, false
	}
	var st storeStats
	if json.Unmarshal(b, &st) != nil {
		return storeStats{}, false
	}
	return st, true
}
