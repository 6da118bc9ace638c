package harness

import (
	"context"
	"errors"
	"time"
)

// errInterrupted is returned by a run that ctx ended early (SIGINT).
var errInterrupted = errors.New("interrupted")

// runner is a set of running nodes, in-process or processes.
type runner interface {
	fireCount() int
	running() int
	// snapshot reads each node's store counters now.
	snapshot() []storeStats
	// stop ends every node gracefully and waits.
	stop()
	// results returns fires and per-node results after stop.
	results() ([]fire, []nodeResult)
}

// startRunner starts the nodes of o with p: OS processes when o.procs,
// else schedulers in this process.
func startRunner(ctx context.Context, o benchOpts, p nodeParams) (runner, error) {
	if o.procs {
		return startProcRunner(o, p)
	}
	return startInProcRunner(ctx, o, p)
}

// measurement is what measure saw of a run: its start and end, and the
// nodes' counters when the steady window opened (snapA, at tA; nil if it
// never did) and at the end (snapB), and the database server's counters
// at the same two moments (dbA, dbB).
type measurement struct {
	t0, tEnd     time.Time
	tA           time.Time
	snapA, snapB []storeStats
	dbA, dbB     dbSample
}

// runTrial creates a scratch database, runs the nodes for o.duration and
// analyses the ledger. The database is dropped on every path. In the
// runtime-schedules mode it creates the schedules before the nodes start
// and measures the task lists after they stopped.
func runTrial(ctx context.Context, o benchOpts) (_ *trialResult, err error) {
	db, err := createScratch(ctx, o.admin)
	if err != nil {
		return nil, err
	}
	defer db.dropOnReturn(&err)
	p := o.params
	p.DSN, p.Group = db.dsn, "bench"
	dbs := openDBSampler(ctx, o.admin, db.name)
	defer dbs.close()
	var plan *schedulePlan
	var cr creation
	if o.sched.active() {
		plan = newSchedulePlan(o.sched, p.Tasks, p.Cron, time.Now())
		before, cpu0 := dbs.sample(ctx), selfCPU()
		if cr, err = createSchedules(ctx, db.dsn, p.Group, plan, o.sched, o); err != nil {
			return nil, err
		}
		cr.addCost(selfCPU()-cpu0, before, dbs.sample(ctx))
		took, av, err := analyzeStats(ctx, db.dsn, o.sched.analyze)
		if err != nil {
			return nil, err
		}
		cr.AnalyzeSeconds, cr.Autovacuum = took.Seconds(), av
	}
	r, err := startRunner(ctx, o, p)
	if err != nil {
		return nil, err
	}
	m, err := measure(ctx, r, o, p.Tasks, dbs)
	r.stop()
	if err != nil {
		return nil, err
	}
	fires, nodes := r.results()
	res, err := newTrialResult(o, p, db.name, m, fires, nodes, plan)
	if err != nil || plan == nil {
		return res, err
	}
	res.Schedules = newSchedulesResult(plan, cr, m, fires, res.PerNode)
	if o.sched.lists {
		l := measureLists(ctx, db.dsn, p.Group)
		res.Schedules.Lists = &l
	}
	return res, nil
}

// measure lets the nodes of r run for o.duration with a progress line
// every second, snapshotting their counters and dbs's when the steady
// window opens and at the end. It returns errInterrupted when ctx ends
// first.
func measure(ctx context.Context, r runner, o benchOpts, tasks int, dbs *dbSampler) (measurement, error) {
	m := measurement{t0: time.Now()}
	prog := newProgress(o.quiet)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastCount, lastT := 0, m.t0
	interrupted := false
loop:
	for {
		select {
		case <-ctx.Done():
			interrupted = true
			break loop
		case now := <-tick.C:
			if m.snapA == nil && now.Sub(m.t0) >= steadyStart {
				m.snapA, m.tA = r.snapshot(), now
				m.dbA = dbs.sample(ctx)
			}
			k := r.fireCount()
			rate := float64(k-lastCount) / now.Sub(lastT).Seconds()
			lastCount, lastT = k, now
			prog.printf("%s %3.0fs/%.0fs  nodes %d/%d  tasks %d  fires %d  %.0f/s",
				o.label, now.Sub(m.t0).Seconds(), o.duration.Seconds(), r.running(), o.nodes, tasks, k, rate)
			if now.Sub(m.t0) >= o.duration {
				break loop
			}
		}
	}
	m.tEnd = time.Now()
	m.snapB = r.snapshot()
	if m.snapA != nil {
		m.dbB = dbs.sample(ctx)
	}
	prog.done()
	if interrupted {
		return m, errInterrupted
	}
	return m, nil
}
