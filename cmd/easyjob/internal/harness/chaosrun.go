package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/netfault"
	"github.com/easyjob-go/easyjob/repository/postgres/pgbouncer"
)

// chaosRun is one chaos run while it injects faults.
type chaosRun struct {
	o       chaosOpts
	c       *procCluster
	rng     *rand.Rand
	res     *chaosResult
	history map[runKey]bool // the run's history (recordedRuns); nil when it could not be read
	end     time.Time

	todo     []event
	mu       sync.Mutex // guards res.Faults and the fault fields the PostgreSQL and clock goroutines write
	pgWG     sync.WaitGroup
	seenExit map[int]bool
	count    map[string]int     // faults by kind
	relay    *netfault.Relay    // between the nodes and PostgreSQL with --silent-path
	clock    *fakeClockServer   // the private server whose clock --clock-step steps
	pat      *patroniCluster    // the private cluster --patroni fails over
	bouncer  *pgbouncer.Bouncer // the pooler --pgbouncer puts between the nodes and PostgreSQL
	patMu    sync.Mutex         // one Patroni fault at a time
	ctx      context.Context    // the run's: ends the Patroni faults' waits on a SIGINT
}

// runChaos creates a scratch database, runs o.procs node processes on it
// while injecting faults, and analyses their ledgers. The database is
// dropped on every path; the ledgers and logs are kept on a failure or
// with --keep. With --clock-step the database lives on a private server
// started for the run and stopped (its files removed) on every path; with
// --patroni on a private Patroni cluster, likewise.
func runChaos(ctx context.Context, o chaosOpts) (_ *chaosResult, err error) {
	hb, dead, rec := o.params.effective()
	var clock *fakeClockServer
	if o.clockStep > 0 {
		if clock, err = startFakeClockServer(ctx, o.libfaketime); err != nil {
			return nil, fmt.Errorf("--clock-step: start a private PostgreSQL server: %w", err)
		}
		defer clock.stop() // deferred first: runs after the database is dropped
		o.admin = clock.dsn
	}
	var pat *patroniCluster
	if o.patroni {
		started := time.Now()
		if pat, err = startPatroniCluster(ctx, o.patroniAsync); err != nil {
			return nil, fmt.Errorf("--patroni: start the cluster: %w", err)
		}
		defer pat.stop() // deferred before the drop: runs after it
		o.admin = pat.dsn
		nodesVia := pat.dsn
		if o.patroniVia == "haproxy" {
			if nodesVia, err = pat.startHAProxy(ctx); err != nil {
				return nil, fmt.Errorf("--patroni-via haproxy: %w", err)
			}
		}
		if !o.quiet {
			fmt.Fprintf(os.Stderr, "easyjob chaos: Patroni cluster (etcd + %d members) up in %.1fs; nodes use %s\n", patroniMembers, time.Since(started).Seconds(), nodesVia)
		}
	}
	var db *scratchDB
	if pat != nil {
		db, err = pat.createScratch(ctx)
	} else {
		db, err = createScratch(ctx, o.admin)
	}
	if err != nil {
		return nil, err
	}
	if o.keepDB {
		fmt.Fprintf(os.Stderr, "easyjob chaos: --keep-db: the run's database is %s (drop it when done)\n", db.name)
	} else {
		defer db.dropOnReturn(&err)
	}
	dir, err := os.MkdirTemp("", "easyjob-chaos-")
	if err != nil {
		return nil, err
	}
	p := o.params
	p.DSN, p.Group = db.dsn, "chaos"
	if pat != nil && pat.haproxy != nil {
		if p.DSN, err = postgres.WithDatabase(pat.haproxyDSN, db.name); err != nil {
			return nil, err
		}
	}
	var bouncer *pgbouncer.Bouncer
	if o.pgbouncer {
		if bouncer, p.DSN, err = startChaosBouncer(ctx, o, db.dsn); err != nil {
			return nil, err
		}
		defer bouncer.Stop() // after the nodes stopped, before the drop
	}
	var relay *netfault.Relay
	if o.silentPath > 0 {
		if relay, p.DSN, err = netfault.Listen(ctx, db.dsn); err != nil {
			return nil, err
		}
		defer relay.Close()
	}
	c, err := newProcCluster(dir, p, o.procs)
	if err != nil {
		return nil, err
	}
	c.extra = []string{"--log-level", o.logLevel}
	r := &chaosRun{
		o: o, c: c, rng: rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15)),
		res: &chaosResult{
			Procs: o.procs, Tasks: p.Tasks, Cron: p.Cron, Seed: o.seed,
			HeartbeatMS: ms(hb), DeadAfterMS: ms(dead), RecoverMS: ms(rec),
			LostThresholdMS: ms(dead + rec + 2*time.Second), FailoverBoundMS: ms(dead + rec + 500*time.Millisecond),
		},
		seenExit: map[int]bool{}, count: map[string]int{}, relay: relay, clock: clock,
		pat: pat, bouncer: bouncer, ctx: ctx,
	}
	for i := range o.procs {
		if _, err := c.start(i); err != nil {
			c.stopAll(10 * time.Second)
			return nil, err
		}
	}
	t0 := time.Now()
	r.end = t0.Add(o.duration)
	r.schedule(t0, dead+rec)
	interrupted := r.loop(ctx, t0)
	tEnd := time.Now()
	r.pgWG.Wait()
	c.stopAll(40 * time.Second)
	if interrupted {
		os.RemoveAll(dir)
		return nil, errInterrupted
	}
	res := r.res
	// The history, read before the database is dropped: every run in the
	// ledgers must have its row (collect).
	if r.history, err = recordedRuns(ctx, db.dsn, p.Group); err != nil {
		res.HistoryError = err.Error()
		err = nil
	}
	r.collect(t0, tEnd, dead+rec+2*time.Second)
	if res.Failed || o.keep {
		res.Dir = dir
		if pat != nil {
			pat.saveLogs(dir)
		}
		if bouncer != nil {
			keepBouncerLog(bouncer, dir)
		}
	} else {
		os.RemoveAll(dir)
	}
	return res, nil
}

// loop injects the faults as they fall due and prints progress until the
// run's end; it reports whether ctx ended it first.
func (r *chaosRun) loop(ctx context.Context, t0 time.Time) (interrupted bool) {
	prog := newProgress(r.o.quiet)
	defer prog.done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastPrint, lastCount := t0, 0
	for {
		select {
		case <-ctx.Done():
			return true
		case now := <-tick.C:
			r.noteSelfExits(now)
			r.injectDue(now)
			if now.Sub(lastPrint) >= time.Second || !now.Before(r.end) {
				k := r.c.poll()
				r.printProgress(prog, now, t0, k, float64(k-lastCount)/now.Sub(lastPrint).Seconds())
				lastPrint, lastCount = now, k
			}
			if !now.Before(r.end) {
				return false
			}
		}
	}
}

func (r *chaosRun) printProgress(prog *progress, now, t0 time.Time, fires int, rate float64) {
	running, frozen := 0, 0
	for _, inc := range r.c.current() {
		if inc != nil {
			running++
			if inc.isFrozen() {
				frozen++
			}
		}
	}
	patroni := ""
	if r.pat != nil {
		patroni = fmt.Sprintf(", %d switchover, %d primary-kill, %d patroni-kill, %d etcd-loss", r.count["switchover"], r.count["primary-kill"], r.count["patroni-kill"], r.count["etcd-loss"])
	}
	if r.bouncer != nil {
		patroni += fmt.Sprintf(", %d pgbouncer-restart", r.count["pgbouncer-restart"])
	}
	prog.printf("chaos %3.0fs/%.0fs  procs %d/%d (%d frozen)  fires %d  %.0f/s  faults: %d kill, %d freeze, %d pg-restart, %d pg-stop, %d silent-path, %d clock-step%s, %d self-exit",
		now.Sub(t0).Seconds(), r.o.duration.Seconds(), running, r.o.procs, frozen, fires,
		rate, r.count["kill"], r.count["freeze"], r.count["pg-restart"], r.count["pg-stop"], r.count["silent-path"], r.count["clock-step"], patroni, r.count["exit"])
}

// collect reads the ledgers and stats of every node process after the run
// [t0, tEnd], analyses them and states why the run failed, if it did.
// lostAfter is the silence that makes a fire lost.
func (r *chaosRun) collect(t0, tEnd time.Time, lostAfter time.Duration) {
	res := r.res
	r.c.poll()
	fires := r.c.fires()
	incs := r.c.all()
	for _, inc := range incs {
		res.procNames = append(res.procNames, inc.Name)
		if st, ok := inc.stats(); ok {
			res.FencedFinishes += st.FencedFinish
			res.StartLost += st.StartLost
			res.Recovered += st.Recovered
			for _, v := range st.Errors {
				res.StoreErrors += v
			}
		}
	}
	res.Incarnations = len(incs)
	res.DurationSeconds = tEnd.Sub(t0).Seconds()
	res.Fires = len(fires)
	for _, f := range fires {
		if f.Task == dagDaemon {
			res.Fires-- // a heartbeat of the DAG set's daemon, not a run
		}
	}
	res.FiresPerSec = float64(len(fires)) / res.DurationSeconds
	for _, f := range res.Faults {
		if isDBOutage(f.Kind) {
			until := f.Until
			if until.IsZero() {
				until = tEnd
			}
			res.pgWindows = append(res.pgWindows, [2]time.Time{f.At.Add(-time.Second), until.Add(lostAfter)})
		}
		if isPatroniFault(f.Kind) && f.struck {
			// As for a PostgreSQL restart: the outage itself is no lost
			// fire; the tasks not back within lostAfter of the writes
			// are (see analyzePatroniFaults). A fault given up before it
			// was issued excuses nothing.
			f.win = patroniWindow(f, tEnd, lostAfter)
			res.pgWindows = append(res.pgWindows, f.win)
		}
	}
	res.clockSteps = clockStepsOf(res.Faults)
	res.history = r.history
	analyzeChaos(res, fires, r.c.params, t0.Add(steadyStart), tEnd.Add(-steadyEndMargin), lostAfter)

	if res.Violations > 0 {
		res.FailureReasons = append(res.FailureReasons, fmt.Sprintf("%d duplicate runs that are not re-runs of an interrupted fire", res.Violations))
	}
	if o := res.Overlap; o != nil && o.Violations() > 0 {
		res.FailureReasons = append(res.FailureReasons, fmt.Sprintf("%d runs of the overlap tasks broke their policy (%d ran at once with another run of their task)", o.Violations(), o.Concurrent))
	}
	if d := res.DAG; d != nil && d.Violations() > 0 {
		res.FailureReasons = append(res.FailureReasons, fmt.Sprintf("%d violations in the DAG set (%s)", d.Violations(), d.violationList()))
	}
	if res.Lost > 0 {
		res.FailureReasons = append(res.FailureReasons, fmt.Sprintf("%d lost fires", res.Lost))
	}
	if res.FailoverLost > 0 {
		res.FailureReasons = append(res.FailureReasons, fmt.Sprintf("%d tasks did not fire within %s of the database accepting writes after a Patroni fault", res.FailoverLost, fmtMS(ms(lostAfter))))
	}
	if res.LostSteps > 0 {
		res.FailureReasons = append(res.FailureReasons, fmt.Sprintf("%d chain steps lost", res.LostSteps))
	}
	if r.history != nil {
		res.findUnrecorded(fires, r.history)
	}
	if res.Unrecorded > 0 {
		res.FailureReasons = append(res.FailureReasons, fmt.Sprintf("%d runs not recorded in the history", res.Unrecorded))
	}
	if len(res.SelfExits) > 0 {
		res.FailureReasons = append(res.FailureReasons, fmt.Sprintf("%d processes exited on their own", len(res.SelfExits)))
	}
	res.Failed = len(res.FailureReasons) > 0
}
