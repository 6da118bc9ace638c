package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository/postgres/pgbouncer"
)

// chaosOpts describes one chaos run.
type chaosOpts struct {
	admin         string
	params        nodeParams
	procs         int
	duration      time.Duration
	warmup        time.Duration
	faultEvery    time.Duration
	restartAfter  time.Duration
	freezeFor     time.Duration
	pgRestart     string
	pgStop        time.Duration // stop PostgreSQL this long as a fault (0 = never)
	pgCluster     string        // pg_ctlcluster's "VERSION NAME" for --pg-stop
	silentPath    time.Duration // silence the nodes' network path to PostgreSQL this long as a fault (0 = never)
	clockStep     time.Duration // step the database server's wall clock by this much, forward then back, as a fault (0 = never)
	libfaketime   string        // path of libfaketime.so.1 with --clock-step
	clockFailover bool          // with --clock-step, step the clock across a crash and restart of the server (a failover to a standby whose clock differs)
	patroni       bool          // run on a private 3-member Patroni cluster and fail it over as faults
	patroniVia    string        // how the nodes reach the Patroni cluster: multihost (a multi-host DSN) or haproxy
	patroniAsync  bool          // Patroni's synchronous_mode off; a patroni-kill first withholds the WAL of asyncLag from the replicas
	asyncLag      time.Duration // with patroniAsync, how long the leader's walsenders are stopped before a patroni-kill
	pgbouncer     bool          // the nodes connect through a private PgBouncer in pool_mode=transaction, restarted as a fault
	pgbPool       int           // its default_pool_size
	pgbDown       time.Duration // how long a pgbouncer-restart fault keeps it down
	pgbUntold     bool          // the nodes' DSN does not say easyjob_pooler=transaction: they find out
	seed          uint64
	quiet         bool
	keep          bool
	keepDB        bool // leave the scratch database in place (its name is printed)
	logLevel      string
	target        string
	summaryFile   string // append the run's haSummary to this file as one JSON line
}

// chaosCmd is the chaos command line.
type chaosCmd struct {
	opts   chaosOpts
	output output
}

// Chaos is the chaos command: it runs node processes on a scratch
// database, kills, freezes and restarts them (and PostgreSQL, if asked),
// and reports failover times, duplicates and lost fires. It returns the
// process exit status: 1 on a violation, a lost fire or a node process
// that exited on its own.
func Chaos(ctx context.Context, args []string) int {
	return execute(ctx, "chaos", &chaosCmd{}, args)
}

func (c *chaosCmd) flagSet() *flag.FlagSet {
	fs := newFlagSet("chaos", "usage: easyjob chaos [flags]\n\nRuns --procs node processes on a fresh database with K tasks and, every\n--fault-every, alternately SIGKILLs a random node (restarting it after\n--restart-after) and SIGSTOPs another past the dead threshold (then SIGCONT),\noptionally restarting PostgreSQL (--pg-restart), stopping it (--pg-stop),\nsilencing the path to it (--silent-path), stepping its clock\n(--clock-step) or restarting the PgBouncer the nodes go through\n(--pgbouncer). Reports failover times, duplicates, lost fires, fenced\nfinishes and processes that exited on their own.\nExit status 1 on a violation, a lost fire or a process that exited on its own. Flags:")
	o := &c.opts
	addRunFlags(fs, &o.admin, &o.params)
	fs.BoolVar(&o.params.DAG, "dag", false, "also run the DAG task set and judge it: a diamond (dag-a every second -> dag-b, dag-c -> dag-d), a fan-out of 8 and fan-in (dag-f -> dag-f0..dag-f7 -> dag-fj), a task of 16 shards every second (dag-s) with a reduce after it (dag-r, which must get the 16 shard results), a broadcast task (dag-all) and a daemon (dag-daemon, which records a heartbeat every 100ms). Fails on a step of a fire lost or run twice without a fault to explain it, a step begun before a parent ended, a lost shard, a broadcast run twice on one node, two daemon instances alive at once for longer than the failover target, or no daemon alive for longer than the lost-fire threshold outside a database outage")
	fs.IntVar(&o.procs, "procs", 3, "node processes")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "run time")
	fs.DurationVar(&o.warmup, "warmup", 8*time.Second, "time before the first fault")
	fs.DurationVar(&o.faultEvery, "fault-every", 10*time.Second, "time between faults (kill, freeze[, pg-restart, pg-stop, silent-path, clock-step or clock-failover, switchover, primary-kill, patroni-kill, pgbouncer-restart] in turn)")
	fs.DurationVar(&o.restartAfter, "restart-after", 5*time.Second, "a killed node is restarted after this")
	fs.DurationVar(&o.freezeFor, "freeze-for", 0, "a frozen node is resumed after this (0 = dead threshold + 3s)")
	fs.StringVar(&o.pgRestart, "pg-restart", "", "shell command that restarts PostgreSQL (e.g. 'pg_ctlcluster 15 main restart'); empty = never")
	fs.DurationVar(&o.pgStop, "pg-stop", 0, "stop PostgreSQL for this long as a fault, in turn with kill and freeze (pg_ctlcluster; 0 = never)")
	fs.DurationVar(&o.silentPath, "silent-path", 0, "as a fault in turn with the others, drop every byte between the nodes and PostgreSQL for this long without closing a socket (a NAT flush, a moved virtual IP); the nodes reach the server through a relay; 0 = never")
	fs.DurationVar(&o.clockStep, "clock-step", 0, "as a fault in turn with the others, step the database server's wall clock by this much, forward, then back on its next turn (an NTP step, a failover to a standby whose clock differs); the nodes' clocks stay put. The run then uses a private PostgreSQL server started under libfaketime (Debian package faketime), not --dsn's; 0 = never")
	fs.BoolVar(&o.clockFailover, "clock-failover", false, "with --clock-step, each step is a failover to a standby whose clock differs: the private server is stopped at once (every connection drops), its clock moved by the step (forward, then back) and it is started again on the same data; the nodes find every committed row under a clock that jumped")
	fs.BoolVar(&o.patroni, "patroni", false, "run on a private PostgreSQL cluster of 3 Patroni members (synchronous mode) and one etcd started for the run, not --dsn's server; the nodes connect with a multi-host DSN (target_session_attrs=read-write), and switchover, primary-kill (SIGKILL the leader's postmaster) and patroni-kill (SIGKILL the leader's Patroni and PostgreSQL; its Patroni is restarted once writes are back) take turns with the other faults. Needs Debian's patroni and etcd-server packages")
	fs.StringVar(&o.patroniVia, "patroni-via", "multihost", "with --patroni, how the nodes reach the leader: multihost (a multi-host DSN with target_session_attrs=read-write) or haproxy (Debian's haproxy on a port of its own, routing to the member whose Patroni REST API answers 200 on GET /primary)")
	fs.BoolVar(&o.patroniAsync, "patroni-async", false, "with --patroni, asynchronous replicas (synchronous_mode: false): a patroni-kill first stops the leader's walsenders (SIGSTOP) for --async-lag, so the replicas miss the transactions it commits meanwhile, as a lagging asynchronous replica does; the promotion then loses them. Measures what such a failover does to claims and finishes (fires run twice, runs missing from the history)")
	fs.DurationVar(&o.asyncLag, "async-lag", 2*time.Second, "with --patroni-async, the replication lag a patroni-kill creates before it strikes")
	fs.BoolVar(&o.pgbouncer, "pgbouncer", false, "the nodes connect through a private PgBouncer (Debian's pgbouncer) in pool_mode=transaction in front of --dsn's server, with easyjob_pooler=transaction in their DSN; pgbouncer-restart (SIGKILL PgBouncer, start it again after --pgbouncer-down) takes turns with the other faults")
	fs.IntVar(&o.pgbPool, "pgbouncer-pool", 20, "with --pgbouncer, its default_pool_size: server connections shared by every node")
	fs.DurationVar(&o.pgbDown, "pgbouncer-down", 2*time.Second, "with --pgbouncer, how long a pgbouncer-restart keeps it down")
	fs.BoolVar(&o.pgbUntold, "pgbouncer-untold", false, "with --pgbouncer, leave easyjob_pooler out of the nodes' DSN: each finds the pooler out by itself")
	fs.StringVar(&o.pgCluster, "pg-cluster", "", "the cluster --pg-stop stops, as pg_ctlcluster's \"VERSION NAME\" (default: the newest under /etc/postgresql, main)")
	fs.Uint64Var(&o.seed, "seed", 0, "random seed (0 = from the clock; printed)")
	c.output.addFlags(fs)
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line")
	fs.BoolVar(&o.keep, "keep", false, "keep ledgers and logs even without findings")
	fs.BoolVar(&o.keepDB, "keep-db", false, "leave the run's database in place for inspection (its name is printed)")
	fs.StringVar(&o.target, "target", "busy", "which node a fault hits: busy (a random one among those that fired in the last 2s) or any")
	fs.StringVar(&o.summaryFile, "summary-file", "", "append one JSON line {mode, faults, lost, doubled, resume_p99_s} to this file: the database faults, lost fires and chain steps, fires run twice against exactly-once, and the p99 of each task's first fire after the database (or pooler) accepted writes again (make chaos-ha)")
	fs.StringVar(&o.logLevel, "log-level", "warn", "node log level (each process logs to its .log file)")
	return fs
}

func (c *chaosCmd) check(fs *flag.FlagSet) error {
	o := &c.opts
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.procs < 2 || o.params.Tasks < 1 {
		return errors.New("need --procs >= 2 and --tasks >= 1")
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	if o.pgStop > 0 && o.pgCluster == "" {
		c, err := defaultPGCluster()
		if err != nil {
			return fmt.Errorf("--pg-stop: %w (set --pg-cluster)", err)
		}
		o.pgCluster = c
	}
	if o.clockStep < 0 {
		return errors.New("--clock-step must be positive (the steps alternate forward and back)")
	}
	if o.clockFailover && o.clockStep == 0 {
		return errors.New("--clock-failover needs --clock-step")
	}
	if o.clockStep > 0 {
		// --pg-stop and --pg-restart act on --dsn's server, which a run
		// with --clock-step does not use.
		if o.pgStop > 0 || o.pgRestart != "" {
			return errors.New("--clock-step runs a private server: it cannot be combined with --pg-stop or --pg-restart")
		}
		lib, err := findLibfaketime()
		if err != nil {
			return fmt.Errorf("--clock-step: %w", err)
		}
		o.libfaketime = lib
	}
	if o.patroni {
		// The other database faults act on --dsn's server or on a
		// single-host path, which a run with --patroni does not use.
		if o.pgStop > 0 || o.pgRestart != "" || o.clockStep > 0 || o.silentPath > 0 {
			return errors.New("--patroni runs a private cluster: it cannot be combined with --pg-stop, --pg-restart, --clock-step or --silent-path")
		}
		if o.asyncLag <= 0 {
			return errors.New("--async-lag must be positive")
		}
		if err := checkPatroniTools(o.patroniVia); err != nil {
			return fmt.Errorf("--patroni: %w", err)
		}
	}
	if o.patroniAsync && !o.patroni {
		return errors.New("--patroni-async needs --patroni")
	}
	if o.pgbouncer {
		// PgBouncer 1.18 fronts one host: not a Patroni cluster; the
		// relay of --silent-path would sit on the same path.
		if o.patroni || o.silentPath > 0 {
			return errors.New("--pgbouncer cannot be combined with --patroni or --silent-path")
		}
		if o.pgbPool < 1 || o.pgbDown < 0 {
			return errors.New("--pgbouncer-pool must be >= 1 and --pgbouncer-down >= 0")
		}
		if _, err := pgbouncer.Find(); err != nil {
			return fmt.Errorf("--pgbouncer: %w", err)
		}
	}
	_, dead, _ := o.params.effective()
	if o.freezeFor == 0 {
		o.freezeFor = dead + 3*time.Second
	}
	return nil
}

// run runs the chaos and prints its result; errFailed when it found a
// violation, a lost fire or a process that exited on its own.
func (c *chaosCmd) run(ctx context.Context) error {
	res, err := runChaos(ctx, c.opts)
	if err != nil {
		return err
	}
	c.output.write(res, res.print)
	if err := appendSummary(c.opts.summaryFile, res.summary(chaosMode(c.opts))); err != nil {
		return err
	}
	if res.Failed {
		return errFailed
	}
	return nil
}
