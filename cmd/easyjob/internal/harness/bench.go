package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// steadyStart and steadyEndMargin bound the steady window of a run: fires
// before start+3s (nodes starting) and after end−2s (nodes stopping) are
// not held against the scheduler.
const (
	steadyStart     = 3 * time.Second
	steadyEndMargin = 2 * time.Second
)

// idleCron fires once a year: with it no task is ever due during a run.
const idleCron = "0 0 0 1 1 *"

// benchOpts describes one bench run (one trial).
type benchOpts struct {
	admin    string // DSN of the server (any database; scratch ones are created next to it)
	nodes    int
	procs    bool // nodes as OS processes of this binary
	params   nodeParams
	duration time.Duration
	dir      string // where process ledgers go
	quiet    bool
	label    string // progress line prefix
	logLevel string // node log level (in-process: stderr; processes: their log file)
	// stagger starts node processes this far apart; fromStart opens the
	// measured window at the first fire instead of steadyStart in, so
	// start-up and joins count against the scheduler.
	stagger   time.Duration
	fromStart bool
	// sched is the runtime-schedules mode (--schedules; inactive: the K
	// tasks are registered in code).
	sched scheduleOpts
}

// benchCmd is the bench command line: one trial's options and what to do
// around it.
type benchCmd struct {
	trial    benchOpts
	procs    int
	idle     time.Duration
	output   output
	keep     bool
	findCap  bool
	capacity capacityOpts
	pgbench  pgbenchOpts
}

// Bench is the bench command: it runs N nodes with K tasks on a scratch
// database and reports fires/s, start lag, duplicates, missed fires,
// claim conflicts, round trips, CPU and memory, then the idle cost; with
// --find-capacity it searches the largest K that keeps the lag bound;
// with --schedules the tasks are runtime schedules of one handler kind,
// created through the public API before the nodes start (schedules.go).
// It returns the process exit status.
func Bench(ctx context.Context, args []string) int {
	return execute(ctx, "bench", &benchCmd{}, args)
}

func (b *benchCmd) flagSet() *flag.FlagSet {
	fs := newFlagSet("bench", "usage: easyjob bench [flags]\n\nRuns N nodes with K tasks on a fresh database of --dsn's server, then reports\nfires/s, start lag, duplicates, missed fires, claim conflicts, round trips per\nfire, CPU and peak RSS per node, and the idle cost. Flags:")
	o := &b.trial
	addRunFlags(fs, &o.admin, &o.params)
	fs.IntVar(&o.nodes, "nodes", 3, "nodes, in this process")
	fs.IntVar(&b.procs, "procs", 0, "nodes as separate OS processes of this binary (overrides --nodes)")
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "how long the nodes run")
	fs.DurationVar(&b.idle, "idle", 10*time.Second, "then measure the idle cost for this long with the same nodes and tasks on a yearly cron (0 = skip)")
	b.output.addFlags(fs)
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line")
	fs.StringVar(&o.logLevel, "log-level", "error", "node log level")
	fs.BoolVar(&b.keep, "keep", false, "keep the ledger directory (processes)")
	fs.DurationVar(&o.stagger, "stagger", 0, "start node processes this far apart (with --procs)")
	fs.BoolVar(&o.fromStart, "from-start", false, "measure from the second after the first fire: start-up and every join included (default: from 3 s in)")
	fs.BoolVar(&b.findCap, "find-capacity", false, "raise K until p99 lag passes --lag-bound or a fire is missed (no ceiling but --capacity-max), bisect, report the largest K held and its share of the pgbench write-pattern limit")
	o.sched.addFlags(fs)
	b.capacity.addFlags(fs)
	b.pgbench.addFlags(fs)
	return fs
}

func (b *benchCmd) check(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o := &b.trial
	if b.procs > 0 {
		o.nodes, o.procs = b.procs, true
	}
	if o.nodes < 1 || (o.params.Tasks < 1 && !o.sched.active()) || o.duration <= steadyStart+steadyEndMargin {
		return errors.New("need --nodes >= 1, --tasks >= 1, --duration > 5s")
	}
	if err := o.sched.check(o.params.Tasks, o.duration); err != nil {
		return err
	}
	if o.sched.active() {
		if o.params.ChainDepth != 0 || b.findCap || b.pgbench.only {
			return errors.New("--schedules excludes --chain-depth (runtime schedules have no parent), --find-capacity and --pgbench-only")
		}
		o.params.Handler = benchHandler
		o.sched.lists = true
	}
	if o.params.GOMAXPROCS != 0 && (!o.procs || o.params.GOMAXPROCS < 0) {
		return errors.New("--gomaxprocs needs --procs (in-process nodes share this process's) and a value >= 1")
	}
	if b.findCap && b.pgbench.only {
		return errors.New("--find-capacity and --pgbench-only exclude each other (--find-capacity measures the pgbench limit too)")
	}
	if b.findCap {
		if err := b.capacity.check(); err != nil {
			return err
		}
	}
	return b.pgbench.check()
}

// run runs the trial and the idle trial (or the capacity search and the
// pgbench write-pattern limit, or that limit alone) and prints the result.
func (b *benchCmd) run(ctx context.Context) error {
	o := b.trial
	if b.pgbench.only {
		wl, err := measureWriteLimit(ctx, o.admin, b.pgbench, 0, o.quiet)
		if err != nil {
			return fmt.Errorf("pgbench write-pattern limit: %w", err)
		}
		b.output.write(wl, wl.print)
		return nil
	}
	if o.procs {
		dir, err := os.MkdirTemp("", "easyjob-bench-")
		if err != nil {
			return err
		}
		o.dir = dir
		if b.keep {
			fmt.Fprintf(os.Stderr, "ledgers and logs kept in %s\n", dir)
		} else {
			defer os.RemoveAll(dir)
		}
	}
	if b.findCap {
		res, err := findCapacity(ctx, o, b.capacity)
		if err != nil {
			return err
		}
		if b.pgbench.withCapacity {
			res.addWriteLimit(measureWriteLimit(ctx, o.admin, b.pgbench, res.BestTasks, o.quiet))
		}
		b.output.write(res, res.print)
		return nil
	}

	o.label = "bench"
	run, err := runTrial(ctx, o)
	if err != nil {
		return err
	}
	out := struct {
		Run  *trialResult `json:"run"`
		Idle *trialResult `json:"idle,omitempty"`
	}{Run: run}
	if b.idle > 0 && ctx.Err() == nil {
		idle := o
		idle.params.Cron = idleCron
		idle.duration = max(b.idle, steadyStart+time.Second)
		idle.label = "idle"
		idle.sched.burst, idle.sched.lists = 0, false
		if out.Idle, err = runTrial(ctx, idle); err != nil {
			return fmt.Errorf("idle: %w", err)
		}
	}
	b.output.write(out, func(w io.Writer) {
		run.print(w)
		if out.Idle != nil {
			out.Idle.printIdle(w)
		}
	})
	return nil
}
