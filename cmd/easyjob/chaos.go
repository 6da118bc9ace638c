package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// interruptWindow: a duplicate run is a re-run of an interrupted fire when
// the first run started at most this long before its node was killed or
// frozen (a near-instant job finishes within milliseconds otherwise).
const interruptWindow = 5 * time.Second

// fault is one injected (or spontaneous) failure.
type fault struct {
	Kind    string    `json:"kind"` // kill | freeze | pg-restart | exit (a process exited on its own)
	Proc    string    `json:"proc,omitempty"`
	NodeIDs []int64   `json:"node_ids,omitempty"`
	At      time.Time `json:"at"`
	Until   time.Time `json:"until"` // restart / SIGCONT / PostgreSQL answering again
	// Failover: kill/freeze → first fire elsewhere of each task whose
	// previous fire was on the faulty node.
	Tasks          int     `json:"tasks_affected"`
	Failover       latency `json:"failover"`
	NotFailedOver  int     `json:"not_failed_over,omitempty"`
	ResumedOnSelf  int     `json:"resumed_on_same_node,omitempty"`
	PGCommandError string  `json:"pg_command_error,omitempty"`
	idx            int     // incarnation index
	failovers      []time.Duration
}

// lostFire is a task silent for longer than the threshold.
type lostFire struct {
	Task     string    `json:"task"`
	From     time.Time `json:"silent_from"`
	To       time.Time `json:"silent_to"`
	GapMS    float64   `json:"gap_ms"`
	Before   string    `json:"last_fire_before,omitempty"`
	After    string    `json:"first_fire_after,omitempty"`
	PGWindow bool      `json:"during_pg_restart"`
}

// dupReport is one (task, scheduled time) run more than once.
type dupReport struct {
	Task    string   `json:"task"`
	Sched   string   `json:"scheduled"`
	Class   string   `json:"class"` // rerun-after-kill | rerun-after-freeze | rerun-after-exit | during-pg-restart | violation
	Runs    []string `json:"runs"`
	Because string   `json:"because,omitempty"`
}

type selfExit struct {
	Proc    string    `json:"proc"`
	At      time.Time `json:"at"`
	Status  string    `json:"status"`
	LastLog []string  `json:"last_log,omitempty"`
}

type chaosResult struct {
	Procs           int     `json:"procs"`
	Tasks           int     `json:"tasks"`
	Cron            string  `json:"cron"`
	DurationSeconds float64 `json:"duration_seconds"`
	Seed            uint64  `json:"seed"`
	HeartbeatMS     float64 `json:"heartbeat_ms"`
	DeadAfterMS     float64 `json:"dead_after_ms"`
	RecoverMS       float64 `json:"recover_interval_ms"`
	LostThresholdMS float64 `json:"lost_threshold_ms"`
	FailoverBoundMS float64 `json:"failover_target_ms"`

	Fires       int     `json:"fires"`
	FiresPerSec float64 `json:"fires_per_sec"`
	Lag         latency `json:"start_lag"`
	Missed      int     `json:"missed_fire_times"` // informational: fire times with no run (misfire policy may merge late fires)

	Faults         []*fault `json:"faults"`
	KillFailover   latency  `json:"kill_failover"`
	FreezeFailover latency  `json:"freeze_failover"`
	AllFailover    latency  `json:"failover"`

	Duplicates      int         `json:"duplicates"`
	AllowedReruns   int         `json:"allowed_reruns"`
	PGDuplicates    int         `json:"duplicates_during_pg_restart"`
	Violations      int         `json:"violations"`
	DupDetails      []dupReport `json:"duplicate_details,omitempty"`
	Lost            int         `json:"lost_fires"`
	PGDelayed       int         `json:"delayed_by_pg_restart"`
	LostDetails     []lostFire  `json:"lost_details,omitempty"`
	FencedFinishes  int64       `json:"fenced_finishes"`
	StartLost       int64       `json:"start_claim_lost"`
	Recovered       int64       `json:"recovered_tasks"`
	SelfExits       []selfExit  `json:"self_exits,omitempty"`
	Incarnations    int         `json:"processes_started"`
	Dir             string      `json:"dir,omitempty"`
	StoreErrors     int64       `json:"store_errors"`
	Failed          bool        `json:"failed"`
	FailureReasons  []string    `json:"failure_reasons,omitempty"`
	pgWindows       [][2]time.Time
	procNames       []string
	killFailovers   []time.Duration
	freezeFailovers []time.Duration
}

type chaosOpts struct {
	admin        string
	params       nodeParams
	procs        int
	duration     time.Duration
	warmup       time.Duration
	faultEvery   time.Duration
	restartAfter time.Duration
	freezeFor    time.Duration
	pgRestart    string
	seed         uint64
	quiet        bool
	keep         bool
	logLevel     string
	target       string
}

func chaosMain(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: easyjob chaos [flags]\n\nRuns --procs node processes on a fresh database with K tasks and, every\n--fault-every, alternately SIGKILLs a random node (restarting it after\n--restart-after) and SIGSTOPs another past the dead threshold (then SIGCONT),\noptionally restarting PostgreSQL with --pg-restart. Reports failover times,\nduplicates, lost fires, fenced finishes and processes that exited on their own.\nExit status 1 on a violation, a lost fire or a process that exited on its own. Flags:")
		fs.PrintDefaults()
	}
	var o chaosOpts
	addRunFlags(fs, &o.admin, &o.params)
	fs.IntVar(&o.procs, "procs", 3, "node processes")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "run time")
	fs.DurationVar(&o.warmup, "warmup", 8*time.Second, "time before the first fault")
	fs.DurationVar(&o.faultEvery, "fault-every", 10*time.Second, "time between faults (kill, freeze[, pg-restart] in turn)")
	fs.DurationVar(&o.restartAfter, "restart-after", 5*time.Second, "a killed node is restarted after this")
	fs.DurationVar(&o.freezeFor, "freeze-for", 0, "a frozen node is resumed after this (0 = dead threshold + 3s)")
	fs.StringVar(&o.pgRestart, "pg-restart", "", "shell command that restarts PostgreSQL (e.g. 'pg_ctlcluster 15 main restart'); empty = never")
	seed := fs.Uint64("seed", 0, "random seed (0 = from the clock; printed)")
	jsonOut := fs.Bool("json", false, "print JSON instead of a table")
	jsonFile := fs.String("json-file", "", "also write the JSON result to this file")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line")
	fs.BoolVar(&o.keep, "keep", false, "keep ledgers and logs even without findings")
	fs.StringVar(&o.target, "target", "busy", "which node a fault hits: busy (a random one among those that fired in the last 2s) or any")
	fs.StringVar(&o.logLevel, "log-level", "warn", "node log level (each process logs to its .log file)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "easyjob chaos: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if o.procs < 2 || o.params.Tasks < 1 {
		fmt.Fprintln(os.Stderr, "easyjob chaos: need --procs >= 2 and --tasks >= 1")
		return 2
	}
	o.seed = *seed
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	_, dead, _ := o.params.effective()
	if o.freezeFor == 0 {
		o.freezeFor = dead + 3*time.Second
	}
	res, err := runChaos(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "easyjob chaos: %v\n", err)
		return 1
	}
	writeJSONFile(*jsonFile, res)
	if *jsonOut {
		writeJSON(os.Stdout, res)
	} else {
		res.print(os.Stdout)
	}
	if res.Failed {
		return 1
	}
	return 0
}

func runChaos(ctx context.Context, o chaosOpts) (_ *chaosResult, err error) {
	hb, dead, rec := o.params.effective()
	db, err := createScratch(ctx, o.admin)
	if err != nil {
		return nil, err
	}
	defer func() {
		if derr := db.drop(); derr != nil {
			fmt.Fprintf(os.Stderr, "easyjob: %v\n", derr)
			if err == nil {
				err = derr
			}
		}
	}()
	dir, err := os.MkdirTemp("", "easyjob-chaos-")
	if err != nil {
		return nil, err
	}
	p := o.params
	p.DSN, p.Group = db.dsn, "chaos"
	c, err := newProcCluster(dir, p, o.procs)
	if err != nil {
		return nil, err
	}
	c.extra = []string{"--log-level", o.logLevel}
	rng := rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15))

	res := &chaosResult{
		Procs: o.procs, Tasks: p.Tasks, Cron: p.Cron, Seed: o.seed,
		HeartbeatMS: ms(hb), DeadAfterMS: ms(dead), RecoverMS: ms(rec),
		LostThresholdMS: ms(dead + rec + 2*time.Second), FailoverBoundMS: ms(dead + rec + 500*time.Millisecond),
	}
	for i := range o.procs {
		if _, err := c.start(i); err != nil {
			c.stopAll(10 * time.Second)
			return nil, err
		}
	}
	t0 := time.Now()
	end := t0.Add(o.duration)
	// No fault starts so late that its recovery and failover could not be
	// seen before the steady window closes.
	tail := max(o.restartAfter, o.freezeFor) + dead + rec + 4*time.Second
	kinds := []string{"kill", "freeze"}
	if o.pgRestart != "" {
		kinds = append(kinds, "pg-restart")
	}
	type pending struct {
		at   time.Time
		what string
		slot int
		inc  *incarnation
		f    *fault // the fault a restart or SIGCONT ends
	}
	var todo []pending
	for i, at := 0, t0.Add(o.warmup); !at.After(end.Add(-tail)); i, at = i+1, at.Add(o.faultEvery) {
		todo = append(todo, pending{at: at, what: kinds[i%len(kinds)]})
	}
	var (
		mu       sync.Mutex // guards res.Faults, res.pgWindows from the pg goroutine
		pgWG     sync.WaitGroup
		seenExit = map[int]bool{}
	)
	prog := newProgress(o.quiet)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastPrint := t0
	lastCount := 0
	interrupted := false
	faultCount := map[string]int{}
	addFault := func(f *fault) {
		mu.Lock()
		res.Faults = append(res.Faults, f)
		mu.Unlock()
		faultCount[f.Kind]++
	}
	// pickRunning picks the victim: a random running, unfrozen node; with
	// --target busy (the default) among those that fired in the last 2s, so
	// that a fault hits a node holding tasks (the default strategy lets one
	// node keep most claims).
	pickRunning := func() *incarnation {
		c.poll()
		var cands, busy []*incarnation
		recent := time.Now().Add(-2 * time.Second).UnixNano()
		for _, inc := range c.current() {
			if inc == nil {
				continue
			}
			inc.mu.Lock()
			frozen := inc.frozen
			inc.mu.Unlock()
			if frozen {
				continue
			}
			cands = append(cands, inc)
			if fs := inc.tail.fires; len(fs) > 0 && fs[len(fs)-1].Start >= recent {
				busy = append(busy, inc)
			}
		}
		if len(cands) < 2 { // always leave a node to fail over to
			return nil
		}
		if o.target == "busy" && len(busy) > 0 {
			cands = busy
		}
		return cands[rng.IntN(len(cands))]
	}
loop:
	for {
		select {
		case <-ctx.Done():
			interrupted = true
			break loop
		case now := <-tick.C:
			// Spontaneous exits: record, restart the slot later.
			for _, inc := range c.all() {
				if !inc.exited() || seenExit[inc.Idx] {
					continue
				}
				seenExit[inc.Idx] = true
				inc.mu.Lock()
				expected, at := inc.expected, inc.exitedAt
				inc.mu.Unlock()
				if expected {
					continue
				}
				res.SelfExits = append(res.SelfExits, selfExit{Proc: inc.Name, At: at, Status: inc.exitInfo(), LastLog: inc.lastLog(15)})
				f := &fault{Kind: "exit", Proc: inc.Name, At: at, idx: inc.Idx}
				addFault(f)
				if now.Before(end) {
					todo = append(todo, pending{at: now.Add(o.restartAfter), what: "restart", slot: inc.Slot, f: f})
				}
			}
			sort.SliceStable(todo, func(i, j int) bool { return todo[i].at.Before(todo[j].at) })
			for len(todo) > 0 && !todo[0].at.After(now) {
				ev := todo[0]
				todo = todo[1:]
				switch ev.what {
				case "kill":
					inc := pickRunning()
					if inc == nil {
						continue
					}
					_ = c.signal(inc, syscall.SIGKILL)
					f := &fault{Kind: "kill", Proc: inc.Name, At: now, idx: inc.Idx}
					addFault(f)
					todo = append(todo, pending{at: now.Add(o.restartAfter), what: "restart", slot: inc.Slot, f: f})
				case "restart":
					if _, err := c.start(ev.slot); err != nil {
						fmt.Fprintf(os.Stderr, "easyjob chaos: restart slot %d: %v\n", ev.slot, err)
					}
					mu.Lock()
					ev.f.Until = time.Now()
					mu.Unlock()
				case "freeze":
					inc := pickRunning()
					if inc == nil {
						continue
					}
					_ = c.signal(inc, syscall.SIGSTOP)
					f := &fault{Kind: "freeze", Proc: inc.Name, At: now, idx: inc.Idx}
					addFault(f)
					todo = append(todo, pending{at: now.Add(o.freezeFor), what: "cont", inc: inc, f: f})
				case "cont":
					_ = c.signal(ev.inc, syscall.SIGCONT)
					mu.Lock()
					ev.f.Until = time.Now()
					mu.Unlock()
				case "pg-restart":
					f := &fault{Kind: "pg-restart", At: now}
					addFault(f)
					pgWG.Go(func() {
						cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
						defer cancel()
						out, err := exec.CommandContext(cctx, "sh", "-c", o.pgRestart).CombinedOutput()
						mu.Lock()
						if err != nil {
							f.PGCommandError = fmt.Sprintf("%v: %s", err, strings.TrimSpace(string(out)))
						}
						mu.Unlock()
						for cctx.Err() == nil {
							pctx, pc := context.WithTimeout(cctx, 2*time.Second)
							perr := ping(pctx, o.admin)
							pc()
							if perr == nil {
								break
							}
							time.Sleep(100 * time.Millisecond)
						}
						mu.Lock()
						f.Until = time.Now()
						mu.Unlock()
					})
				}
			}
			if now.Sub(lastPrint) >= time.Second || !now.Before(end) {
				k := c.poll()
				running, frozen := 0, 0
				for _, inc := range c.current() {
					if inc != nil {
						running++
						inc.mu.Lock()
						if inc.frozen {
							frozen++
						}
						inc.mu.Unlock()
					}
				}
				prog.printf("chaos %3.0fs/%.0fs  procs %d/%d (%d frozen)  fires %d  %.0f/s  faults: %d kill, %d freeze, %d pg-restart, %d self-exit",
					now.Sub(t0).Seconds(), o.duration.Seconds(), running, o.procs, frozen, k,
					float64(k-lastCount)/now.Sub(lastPrint).Seconds(), faultCount["kill"], faultCount["freeze"], faultCount["pg-restart"], faultCount["exit"])
				lastPrint, lastCount = now, k
			}
			if !now.Before(end) {
				break loop
			}
		}
	}
	tEnd := time.Now()
	prog.done()
	pgWG.Wait()
	c.stopAll(40 * time.Second)
	if interrupted {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("interrupted")
	}
	c.poll()
	fires := c.fires()
	incs := c.all()
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
	res.FiresPerSec = float64(len(fires)) / res.DurationSeconds
	for _, f := range res.Faults {
		if f.Kind == "pg-restart" {
			until := f.Until
			if until.IsZero() {
				until = tEnd
			}
			res.pgWindows = append(res.pgWindows, [2]time.Time{f.At.Add(-time.Second), until.Add(dead + rec + 2*time.Second)})
		}
	}
	analyzeChaos(res, fires, p, t0.Add(steadyStart), tEnd.Add(-steadyEndMargin), dead+rec+2*time.Second)

	if res.Violations > 0 {
		res.FailureReasons = append(res.FailureReasons, fmt.Sprintf("%d duplicate runs that are not re-runs of an interrupted fire", res.Violations))
	}
	if res.Lost > 0 {
		res.FailureReasons = append(res.FailureReasons, fmt.Sprintf("%d lost fires", res.Lost))
	}
	if len(res.SelfExits) > 0 {
		res.FailureReasons = append(res.FailureReasons, fmt.Sprintf("%d processes exited on their own", len(res.SelfExits)))
	}
	res.Failed = len(res.FailureReasons) > 0
	if res.Failed || o.keep {
		res.Dir = dir
	} else {
		os.RemoveAll(dir)
	}
	return res, nil
}

// analyzeChaos fills failover, duplicates, lost fires from the ledger.
func analyzeChaos(res *chaosResult, fires []fire, p nodeParams, from, to time.Time, lostAfter time.Duration) {
	procName := func(i int) string {
		if i >= 0 && i < len(res.procNames) {
			return res.procNames[i]
		}
		return "?"
	}
	// Node ids per incarnation, from its fires.
	ids := map[int]map[int64]bool{}
	for _, f := range fires {
		if ids[f.Proc] == nil {
			ids[f.Proc] = map[int64]bool{}
		}
		ids[f.Proc][f.Node] = true
	}
	byTask := map[string][]fire{}
	var lags []time.Duration
	for _, f := range fires {
		byTask[f.Task] = append(byTask[f.Task], f)
		lags = append(lags, f.Lag())
	}
	res.Lag = summarize(lags)
	for _, fs := range byTask {
		sort.Slice(fs, func(i, j int) bool { return fs[i].Start < fs[j].Start })
	}
	tasks := make([]string, p.Tasks)
	for i := range tasks {
		tasks[i] = taskName(i)
	}
	if exp, err := cronTimes(p.Cron, from, to); err == nil {
		res.Missed = analyzeSteady(fires, tasks, exp, from, to).Missed
	}

	// Failover per fault.
	for _, f := range res.Faults {
		for id := range ids[f.idx] {
			f.NodeIDs = append(f.NodeIDs, id)
		}
		sort.Slice(f.NodeIDs, func(i, j int) bool { return f.NodeIDs[i] < f.NodeIDs[j] })
		if f.Kind != "kill" && f.Kind != "freeze" && f.Kind != "exit" {
			continue
		}
		at := f.At.UnixNano()
		for _, fs := range byTask {
			i := sort.Search(len(fs), func(i int) bool { return fs[i].Start > at })
			if i == 0 || fs[i-1].Proc != f.idx {
				continue
			}
			f.Tasks++
			switch {
			case i == len(fs):
				f.NotFailedOver++
			case fs[i].Proc == f.idx:
				f.ResumedOnSelf++
			default:
				f.failovers = append(f.failovers, time.Duration(fs[i].Start-at))
			}
		}
		f.Failover = summarize(f.failovers)
		switch f.Kind {
		case "kill":
			res.killFailovers = append(res.killFailovers, f.failovers...)
		case "freeze":
			res.freezeFailovers = append(res.freezeFailovers, f.failovers...)
		}
	}
	res.KillFailover = summarize(res.killFailovers)
	res.FreezeFailover = summarize(res.freezeFailovers)
	res.AllFailover = summarize(append(append([]time.Duration(nil), res.killFailovers...), res.freezeFailovers...))

	inPG := func(a, b int64) bool {
		for _, w := range res.pgWindows {
			if a <= w[1].UnixNano() && b >= w[0].UnixNano() {
				return true
			}
		}
		return false
	}

	// Duplicates.
	for _, d := range duplicates(fires) {
		first := d.Runs[0]
		class, because := "violation", ""
		for _, f := range res.Faults {
			if f.idx != first.Proc || (f.Kind != "kill" && f.Kind != "freeze" && f.Kind != "exit") {
				continue
			}
			if gap := f.At.UnixNano() - first.Start; gap >= 0 && gap <= int64(interruptWindow) {
				class = "rerun-after-" + f.Kind
				because = fmt.Sprintf("first run on %s started %s before its %s", procName(first.Proc), fmtMS(ms(time.Duration(gap))), f.Kind)
				break
			}
		}
		if class == "violation" && inPG(first.Start, d.Runs[len(d.Runs)-1].Start) {
			class, because = "during-pg-restart", "first run while PostgreSQL was restarting; counted as a violation"
		}
		dr := dupReport{Task: d.Task, Sched: fmtTime(d.Sched), Class: class, Because: because}
		for _, r := range d.Runs {
			dr.Runs = append(dr.Runs, fmtFire(r, procName))
		}
		extra := len(d.Runs) - 1
		res.Duplicates += extra
		switch class {
		case "violation":
			res.Violations += extra
		case "during-pg-restart":
			res.PGDuplicates += extra
			res.Violations += extra
		default:
			res.AllowedReruns += extra
		}
		if class != "violation" && class != "during-pg-restart" && len(res.DupDetails) >= 50 {
			continue
		}
		res.DupDetails = append(res.DupDetails, dr)
	}

	// Lost fires: silences longer than lostAfter inside [from, to].
	lo, hi := from.UnixNano(), to.UnixNano()
	for _, task := range tasks {
		fs := byTask[task]
		prev := lo
		var prevFire *fire
		check := func(next int64, nextFire *fire) {
			if next-prev > int64(lostAfter) {
				lf := lostFire{Task: task, From: time.Unix(0, prev), To: time.Unix(0, next), GapMS: ms(time.Duration(next - prev))}
				if prevFire != nil {
					lf.Before = fmtFire(*prevFire, procName)
				}
				if nextFire != nil {
					lf.After = fmtFire(*nextFire, procName)
				}
				lf.PGWindow = inPG(prev, next)
				if lf.PGWindow {
					res.PGDelayed++
				} else {
					res.Lost++
				}
				if len(res.LostDetails) < 100 {
					res.LostDetails = append(res.LostDetails, lf)
				}
			}
		}
		for i := range fs {
			s := fs[i].Start
			if s < lo {
				prevFire = &fs[i]
				continue
			}
			if s > hi {
				check(s, &fs[i])
				prev = hi + 1 // checked
				break
			}
			check(s, &fs[i])
			prev, prevFire = s, &fs[i]
		}
		if prev <= hi {
			check(hi, nil)
		}
	}
}

func (r *chaosResult) print(w io.Writer) {
	fmt.Fprintf(w, "easyjob chaos: %d processes, %d tasks on %q, %.0fs, seed %d\n", r.Procs, r.Tasks, r.Cron, r.DurationSeconds, r.Seed)
	fmt.Fprintf(w, "  heartbeat %s, dead after %s, recover every %s; lost-fire threshold %s; failover target %s\n\n",
		fmtMS(r.HeartbeatMS), fmtMS(r.DeadAfterMS), fmtMS(r.RecoverMS), fmtMS(r.LostThresholdMS), fmtMS(r.FailoverBoundMS))
	var ft table
	ft.add("at (UTC)", "fault", "proc", "node", "lasted", "tasks", "failover p50", "p99", "max", "note")
	for _, f := range r.Faults {
		lasted := "-"
		if !f.Until.IsZero() {
			lasted = fmtMS(ms(f.Until.Sub(f.At)))
		}
		note := ""
		if f.NotFailedOver > 0 {
			note += fmt.Sprintf("%d never fired again; ", f.NotFailedOver)
		}
		if f.ResumedOnSelf > 0 {
			note += fmt.Sprintf("%d resumed on the same node; ", f.ResumedOnSelf)
		}
		if f.PGCommandError != "" {
			note += "command failed: " + f.PGCommandError
		}
		p50, p99, mx := "-", "-", "-"
		if f.Failover.N > 0 {
			p50, p99, mx = fmtMS(f.Failover.P50), fmtMS(f.Failover.P99), fmtMS(f.Failover.Max)
		}
		ft.add(f.At.UTC().Format("15:04:05.0"), f.Kind, orDash(f.Proc), fmtIDs(f.NodeIDs), lasted, f.Tasks, p50, p99, mx, strings.TrimSuffix(note, "; "))
	}
	ft.write(w, "  ")
	fmt.Fprintln(w)
	var tb table
	tb.add("fires", fmt.Sprintf("%d  (%.1f/s), start lag %s", r.Fires, r.FiresPerSec, r.Lag))
	tb.add("failover (kill)", r.KillFailover.String())
	tb.add("failover (freeze)", r.FreezeFailover.String())
	tb.add("failover (all)", r.AllFailover.String()+fmt.Sprintf("  target p99 <= %s", fmtMS(r.FailoverBoundMS)))
	tb.add("duplicates", fmt.Sprintf("%d  = %d allowed re-runs of interrupted fires + %d violations (%d of them during a PostgreSQL restart)",
		r.Duplicates, r.AllowedReruns, r.Violations, r.PGDuplicates))
	tb.add("lost fires", fmt.Sprintf("%d  (silent > %s outside PostgreSQL restarts); delayed by a PostgreSQL restart: %d", r.Lost, fmtMS(r.LostThresholdMS), r.PGDelayed))
	tb.add("missed fire times", fmt.Sprintf("%d  (informational: fire times without a run; a late fire runs once per the misfire policy)", r.Missed))
	tb.add("fenced finishes", fmt.Sprintf("%d  (+ %d starts refused: claim lost)", r.FencedFinishes, r.StartLost))
	tb.add("recovered tasks", r.Recovered)
	tb.add("store errors", r.StoreErrors)
	tb.add("self exits", len(r.SelfExits))
	tb.add("processes", r.Incarnations)
	tb.write(w, "  ")
	for _, d := range r.DupDetails {
		if d.Class == "violation" || d.Class == "during-pg-restart" {
			fmt.Fprintf(w, "\n  DUPLICATE (%s) %s @ %s %s\n", d.Class, d.Task, d.Sched, d.Because)
			for _, s := range d.Runs {
				fmt.Fprintln(w, "    "+s)
			}
		}
	}
	shown := 0
	for _, l := range r.LostDetails {
		if shown >= 20 {
			fmt.Fprintf(w, "\n  ... %d more silences in the JSON output\n", len(r.LostDetails)-shown)
			break
		}
		shown++
		kind := "LOST"
		if l.PGWindow {
			kind = "delayed by PostgreSQL restart"
		}
		fmt.Fprintf(w, "\n  %s: %s silent %s (%s .. %s)\n", kind, l.Task, fmtMS(l.GapMS), l.From.UTC().Format("15:04:05.000"), l.To.UTC().Format("15:04:05.000"))
		if l.Before != "" {
			fmt.Fprintln(w, "    last before: "+l.Before)
		}
		if l.After != "" {
			fmt.Fprintln(w, "    first after: "+l.After)
		}
	}
	for _, e := range r.SelfExits {
		fmt.Fprintf(w, "\n  SELF EXIT %s at %s: %s\n", e.Proc, e.At.UTC().Format("15:04:05.000"), e.Status)
		for _, l := range e.LastLog {
			fmt.Fprintln(w, "    | "+l)
		}
	}
	fmt.Fprintln(w)
	if r.Failed {
		fmt.Fprintf(w, "FAIL: %s\n", strings.Join(r.FailureReasons, "; "))
	} else {
		fmt.Fprintln(w, "OK: no violation, no lost fire, no process exited on its own")
	}
	if r.Dir != "" {
		fmt.Fprintf(w, "ledgers and node logs kept in %s\n", r.Dir)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtIDs(ids []int64) string {
	if len(ids) == 0 {
		return "-"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}
