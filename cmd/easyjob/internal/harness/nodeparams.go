package harness

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/cmd/easyjob/internal/dsn"
	"github.com/easyjob-go/easyjob/easyjob"
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
	ChainDepth      int  // steps under each task: t00001 -> t00001.s1 -> t00001.s2 ... (0: flat tasks)
	OverlapTasks    int  // tasks whose runs outlast their interval, one per overlap policy in turn (overlap.go)
	DAG             bool // the DAG task set: steps, shards, a broadcast task and a daemon (chaosdag.go)
	Metrics         bool // a Prometheus observer on each node (metrics.go)
	GOMAXPROCS      int  // node processes only: runtime.GOMAXPROCS (0 = Go's own choice)
	LogLines        int  // lines each run writes through easyjob.Logger (run logs; 0: silent jobs)
	LogDiscard      bool // the LogLines lines go to a discarding slog handler instead: the job's own cost of logging, nothing kept
	// Handler, when set, is the one handler kind the node registers
	// (runtime schedules, bench --schedules) instead of the Tasks tasks.
	Handler string
}

// addRunFlags registers the flags bench and chaos share: the server, the
// number of tasks and the node tuning.
func addRunFlags(fs *flag.FlagSet, admin *string, p *nodeParams) {
	fs.StringVar(admin, "dsn", dsn.FromEnv(), "PostgreSQL server (a database is created next to the one named; default $EASYJOB_DSN)")
	fs.IntVar(&p.Tasks, "tasks", 100, "tasks K")
	addNodeFlags(fs, p)
}

// addNodeFlags registers the node tuning flags shared by bench, chaos and
// NodeCommand.
func addNodeFlags(fs *flag.FlagSet, p *nodeParams) {
	fs.StringVar(&p.Cron, "cron", "* * * * * *", "cron expression of every task (6 fields: leading seconds)")
	fs.StringVar(&p.Strategy, "strategy", "", "claim strategy (default, id_hash, least_count, weight); empty = library default")
	fs.DurationVar(&p.Heartbeat, "heartbeat", 0, "Config.HeartbeatInterval (0 = library default, 1s)")
	fs.DurationVar(&p.DeadAfter, "dead-after", 0, "Config.DeadAfter (0 = library default, 3 heartbeats)")
	fs.DurationVar(&p.RecoverInterval, "recover-interval", 0, "Config.RecoverInterval (0 = library default, 1s)")
	fs.IntVar(&p.Workers, "workers", 0, "Config.Workers (0 = library default, 10)")
	fs.IntVar(&p.MaxClaims, "max-claims", 0, "Config.MaxClaims (0 = library default, 1000 × workers)")
	fs.IntVar(&p.ChainDepth, "chain-depth", 0, "make every task the root of a chain of this many steps (t00001 -> t00001.s1 -> ...); 0 = flat tasks")
	fs.IntVar(&p.OverlapTasks, "overlap-tasks", 0, "also register this many tasks on every second whose runs last "+overlapRun.String()+", with the overlap policies skip, buffer_one, buffer_all, cancel and terminate in turn (o00-skip, o01-buffer_one, ...); chaos checks each policy")
	fs.BoolVar(&p.Metrics, "metrics", false, "give every node a Prometheus observer (easyjob/metrics/prom), scraped every 15s")
	fs.IntVar(&p.LogLines, "log-lines", 0, "every run of a bench task writes this many lines through easyjob.Logger, kept with the run (run logs); 0 = silent jobs")
	fs.BoolVar(&p.LogDiscard, "log-discard", false, "with --log-lines: write the lines through a slog text handler that discards them (the job's own cost of formatting them; nothing kept), to compare with keeping them")
	fs.IntVar(&p.GOMAXPROCS, "gomaxprocs", 0, "GOMAXPROCS of each node process, as a container's CPU limit sets it (0 = Go's own choice; --procs only)")
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

// args renders p as NodeCommand flags.
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
	if p.ChainDepth != 0 {
		a = append(a, "--chain-depth", strconv.Itoa(p.ChainDepth))
	}
	if p.OverlapTasks != 0 {
		a = append(a, "--overlap-tasks", strconv.Itoa(p.OverlapTasks))
	}
	if p.DAG {
		a = append(a, "--dag")
	}
	if p.Metrics {
		a = append(a, "--metrics")
	}
	if p.GOMAXPROCS != 0 {
		a = append(a, "--gomaxprocs", strconv.Itoa(p.GOMAXPROCS))
	}
	if p.LogLines != 0 {
		a = append(a, "--log-lines", strconv.Itoa(p.LogLines))
	}
	if p.LogDiscard {
		a = append(a, "--log-discard")
	}
	if p.Handler != "" {
		a = append(a, "--handler", p.Handler)
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

// taskNames lists the names of the p.Tasks bench tasks.
func (p nodeParams) taskNames() []string {
	tasks := make([]string, p.Tasks)
	for i := range tasks {
		tasks[i] = taskName(i)
	}
	return tasks
}

// stepName names step k (1-based) of the chain under bench task i.
func stepName(i, k int) string { return fmt.Sprintf("%s.s%d", taskName(i), k) }

// stepNames lists every chain step's name, step by step under each task.
func (p nodeParams) stepNames() []string {
	var out []string
	for i := range p.Tasks {
		for k := 1; k <= p.ChainDepth; k++ {
			out = append(out, stepName(i, k))
		}
	}
	return out
}

// registerTasks registers the K bench tasks on s, each with its chain of
// p.ChainDepth steps, the overlap tasks and the DAG set; or, with
// p.Handler, that handler kind alone.
func registerTasks(s *easyjob.Scheduler, p nodeParams, l ledger) error {
	if p.Handler != "" {
		return s.Handle(p.Handler, easyjob.HandlerOf(ledgerHandler(l)))
	}
	job := loggingJob(ledgerJob(l), p.LogLines, p.LogDiscard)
	for i := range p.Tasks {
		if err := s.Register(taskName(i), p.Cron, job); err != nil {
			return err
		}
		parent := taskName(i)
		for k := 1; k <= p.ChainDepth; k++ {
			if err := s.Register(stepName(i, k), "", job, easyjob.Parent(parent)); err != nil {
				return err
			}
			parent = stepName(i, k)
		}
	}
	if p.DAG {
		if err := registerDagTasks(s, l); err != nil {
			return err
		}
	}
	return registerOverlapTasks(s, p, l)
}

// loggingJob is job, then lines lines written through easyjob.Logger
// (bench --log-lines: the cost of run logs; the ledger's start is
// recorded before them, as a silent job's), or through a text handler
// that discards them (discard: the job's own cost of its lines); job
// itself when lines is 0.
func loggingJob(job easyjob.Func, lines int, discard bool) easyjob.Func {
	if lines <= 0 {
		return job
	}
	return func(ctx context.Context) error {
		err := job(ctx)
		log := easyjob.Logger(ctx)
		if discard {
			log = slog.New(slog.NewTextHandler(io.Discard, nil))
		}
		for i := range lines {
			log.Info("bench line", "i", i, "of", lines)
		}
		return err
	}
}
