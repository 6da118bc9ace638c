package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/postgres"
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
}

// nodeResult is one node's share of a run.
type nodeResult struct {
	Name            string           `json:"name"`
	NodeIDs         []int64          `json:"node_ids"`
	Fires           int              `json:"fires"`
	CPUSeconds      float64          `json:"cpu_seconds"`
	PeakRSSBytes    int64            `json:"peak_rss_bytes"`
	RoundTrips      int64            `json:"round_trips"`
	ClaimConflicts  int64            `json:"claim_conflicts"`
	FencedFinishes  int64            `json:"fenced_finishes"`
	QueriesPerSec   float64          `json:"queries_per_sec"` // over the measured window
	CallsPerSec     map[string]int64 `json:"-"`
	Exit            string           `json:"exit,omitempty"`
	windowCalls     storeStats
	windowFires     int
	windowSeconds   float64
	final           storeStats
	wholeProcessCPU bool
}

// trialResult is the outcome of one bench run.
type trialResult struct {
	Mode              string             `json:"mode"` // processes | in-process
	Nodes             int                `json:"nodes"`
	Tasks             int                `json:"tasks"`
	Cron              string             `json:"cron"`
	Strategy          string             `json:"strategy"`
	DurationSeconds   float64            `json:"duration_seconds"`
	Fires             int                `json:"fires"`
	FiresPerSec       float64            `json:"fires_per_sec"`
	Steady            steadyReport       `json:"steady"`
	Duplicates        int                `json:"duplicates"`
	DuplicateExamples []string           `json:"duplicate_examples,omitempty"`
	MissedExamples    []string           `json:"missed_examples,omitempty"`
	ClaimAsked        int64              `json:"claim_refs_asked"`
	ClaimWon          int64              `json:"claim_rows_won"`
	ClaimConflicts    int64              `json:"claim_conflicts"`
	RoundTrips        int64              `json:"round_trips_total"`
	RoundTripsPerFire float64            `json:"round_trips_per_fire"` // steady window
	CallsPerFire      map[string]float64 `json:"calls_per_fire"`       // steady window, by method
	QueriesPerSecNode float64            `json:"queries_per_sec_per_node"`
	CallsPerSecNode   map[string]float64 `json:"calls_per_sec_per_node"` // measured window, by method
	FencedFinishes    int64              `json:"fenced_finishes"`
	StoreErrors       map[string]int64   `json:"store_errors,omitempty"`
	CPUWholeProcess   bool               `json:"cpu_is_whole_process,omitempty"`
	PerNode           []nodeResult       `json:"per_node"`
	Database          string             `json:"database"`
}

func benchMain(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: easyjob bench [flags]\n\nRuns N nodes with K tasks on a fresh database of --dsn's server, then reports\nfires/s, start lag, duplicates, missed fires, claim conflicts, round trips per\nfire, CPU and peak RSS per node, and the idle cost. Flags:")
		fs.PrintDefaults()
	}
	var o benchOpts
	addRunFlags(fs, &o.admin, &o.params)
	fs.IntVar(&o.nodes, "nodes", 3, "nodes, in this process")
	procs := fs.Int("procs", 0, "nodes as separate OS processes of this binary (overrides --nodes)")
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "how long the nodes run")
	idle := fs.Duration("idle", 10*time.Second, "then measure the idle cost for this long with the same nodes and tasks on a yearly cron (0 = skip)")
	jsonOut := fs.Bool("json", false, "print JSON instead of a table")
	jsonFile := fs.String("json-file", "", "also write the JSON result to this file")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line")
	fs.StringVar(&o.logLevel, "log-level", "error", "node log level")
	keep := fs.Bool("keep", false, "keep the ledger directory (processes)")
	findCap := fs.Bool("find-capacity", false, "raise K until p99 lag passes --lag-bound or a fire is missed; report the largest K held")
	lagBound := fs.Duration("lag-bound", 100*time.Millisecond, "find-capacity: p99 start lag bound")
	capStart := fs.Int("capacity-start", 250, "find-capacity: first K")
	capMax := fs.Int("capacity-max", 16000, "find-capacity: largest K tried")
	capTrial := fs.Duration("capacity-trial", 15*time.Second, "find-capacity: duration of each trial")
	capSteps := fs.Int("capacity-steps", 3, "find-capacity: bisection steps after the first failure")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "easyjob bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *procs > 0 {
		o.nodes, o.procs = *procs, true
	}
	if o.nodes < 1 || o.params.Tasks < 1 || o.duration <= steadyStart+steadyEndMargin {
		fmt.Fprintln(os.Stderr, "easyjob bench: need --nodes >= 1, --tasks >= 1, --duration > 5s")
		return 2
	}
	if o.procs {
		dir, err := os.MkdirTemp("", "easyjob-bench-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "easyjob bench: %v\n", err)
			return 1
		}
		o.dir = dir
		if *keep {
			fmt.Fprintf(os.Stderr, "ledgers and logs kept in %s\n", dir)
		} else {
			defer os.RemoveAll(dir)
		}
	}

	if *findCap {
		res, err := findCapacity(ctx, o, *lagBound, *capStart, *capMax, *capTrial, *capSteps)
		if err != nil {
			fmt.Fprintf(os.Stderr, "easyjob bench: %v\n", err)
			return 1
		}
		writeJSONFile(*jsonFile, res)
		if *jsonOut {
			writeJSON(os.Stdout, res)
		} else {
			res.print(os.Stdout)
		}
		return 0
	}

	o.label = "bench"
	run, err := runTrial(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "easyjob bench: %v\n", err)
		return 1
	}
	out := struct {
		Run  *trialResult `json:"run"`
		Idle *trialResult `json:"idle,omitempty"`
	}{Run: run}
	if *idle > 0 && ctx.Err() == nil {
		io := o
		io.params.Cron = idleCron
		io.duration = max(*idle, steadyStart+time.Second)
		io.label = "idle"
		if out.Idle, err = runTrial(ctx, io); err != nil {
			fmt.Fprintf(os.Stderr, "easyjob bench: idle: %v\n", err)
			return 1
		}
	}
	writeJSONFile(*jsonFile, out)
	if *jsonOut {
		writeJSON(os.Stdout, out)
	} else {
		run.print(os.Stdout)
		if out.Idle != nil {
			out.Idle.printIdle(os.Stdout)
		}
	}
	return 0
}

// writeJSONFile writes v to path (nothing when path is empty).
func writeJSONFile(path string, v any) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "easyjob: %v\n", err)
		return
	}
	defer f.Close()
	writeJSON(f, v)
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

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

// runTrial creates a scratch database, runs the nodes for o.duration and
// analyses the ledger. The database is dropped on every path.
func runTrial(ctx context.Context, o benchOpts) (_ *trialResult, err error) {
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
	p := o.params
	p.DSN, p.Group = db.dsn, "bench"
	var r runner
	if o.procs {
		r, err = startProcRunner(o, p)
	} else {
		r, err = startInProcRunner(ctx, o, p)
	}
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	prog := newProgress(o.quiet)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var snapA []storeStats
	var tA time.Time
	lastCount, lastT := 0, t0
	interrupted := false
loop:
	for {
		select {
		case <-ctx.Done():
			interrupted = true
			break loop
		case now := <-tick.C:
			if snapA == nil && now.Sub(t0) >= steadyStart {
				snapA, tA = r.snapshot(), now
			}
			k := r.fireCount()
			rate := float64(k-lastCount) / now.Sub(lastT).Seconds()
			lastCount, lastT = k, now
			prog.printf("%s %3.0fs/%.0fs  nodes %d/%d  tasks %d  fires %d  %.0f/s",
				o.label, now.Sub(t0).Seconds(), o.duration.Seconds(), r.running(), o.nodes, p.Tasks, k, rate)
			if now.Sub(t0) >= o.duration {
				break loop
			}
		}
	}
	tEnd := time.Now()
	snapB := r.snapshot()
	prog.done()
	r.stop()
	if interrupted {
		return nil, errors.New("interrupted")
	}
	fires, nodes := r.results()

	res := &trialResult{
		Mode: "in-process", Nodes: o.nodes, Tasks: p.Tasks, Cron: p.Cron, Strategy: p.Strategy,
		DurationSeconds: tEnd.Sub(t0).Seconds(), Fires: len(fires), Database: db.name,
		CallsPerFire: map[string]float64{}, CallsPerSecNode: map[string]float64{}, StoreErrors: map[string]int64{},
	}
	if res.Strategy == "" {
		res.Strategy = "default"
	}
	if o.procs {
		res.Mode = "processes"
	}
	res.FiresPerSec = float64(len(fires)) / res.DurationSeconds

	tasks := make([]string, p.Tasks)
	for i := range tasks {
		tasks[i] = taskName(i)
	}
	from, to := t0.Add(steadyStart), tEnd.Add(-steadyEndMargin)
	expected, err := cronTimes(p.Cron, from, to)
	if err != nil {
		return nil, err
	}
	res.Steady = analyzeSteady(fires, tasks, expected, from, to)
	for _, m := range res.Steady.missedList {
		res.MissedExamples = append(res.MissedExamples, fmt.Sprintf("%s @ %s", m.Task, m.Sched.Format("15:04:05")))
	}
	procName := func(i int) string {
		if i < len(nodes) && o.procs {
			return nodes[i].Name
		}
		return "-"
	}
	dups := duplicates(fires)
	for _, d := range dups {
		res.Duplicates += len(d.Runs) - 1
		if len(res.DuplicateExamples) < 10 {
			for _, f := range d.Runs {
				res.DuplicateExamples = append(res.DuplicateExamples, fmtFire(f, procName))
			}
		}
	}

	// Per-node counters: totals, and the window [snapA, snapB] for rates.
	var window storeStats
	windowFires := 0
	var total storeStats
	for i := range nodes {
		nd := &nodes[i]
		total.add(nd.final)
		if snapA != nil && i < len(snapA) && i < len(snapB) {
			a, b := snapA[i], snapB[i]
			if a.At == 0 {
				a.At = tA.UnixNano()
			}
			nd.windowCalls = b.sub(a)
			nd.windowSeconds = time.Duration(b.At - a.At).Seconds()
			for _, f := range fires {
				if f.Start >= a.At && f.Start < b.At && nodeOwns(o.procs, i, nd, f) {
					nd.windowFires++
				}
			}
			if nd.windowSeconds > 0 {
				nd.QueriesPerSec = float64(nd.windowCalls.RoundTrips()) / nd.windowSeconds
				for k, v := range nd.windowCalls.Calls {
					if k != "Listen" {
						res.CallsPerSecNode[k] += float64(v) / nd.windowSeconds / float64(len(nodes))
					}
				}
			}
			window.add(nd.windowCalls)
			windowFires += nd.windowFires
			res.QueriesPerSecNode += nd.QueriesPerSec / float64(len(nodes))
		}
	}
	res.ClaimAsked, res.ClaimWon, res.ClaimConflicts = total.ClaimAsked, total.ClaimWon, total.Conflicts()
	res.RoundTrips, res.FencedFinishes = total.RoundTrips(), total.FencedFinish+total.StartLost
	for k, v := range total.Errors {
		if v > 0 {
			res.StoreErrors[k] = v
		}
	}
	if windowFires > 0 {
		res.RoundTripsPerFire = float64(window.RoundTrips()) / float64(windowFires)
		for k, v := range window.Calls {
			if k != "Listen" {
				res.CallsPerFire[k] = float64(v) / float64(windowFires)
			}
		}
	}
	res.PerNode = nodes
	res.CPUWholeProcess = !o.procs
	return res, nil
}

// nodeOwns reports whether fire f was run by node i.
func nodeOwns(procs bool, i int, nd *nodeResult, f fire) bool {
	if procs {
		return f.Proc == i
	}
	return contains64(nd.NodeIDs, f.Node)
}

func contains64(list []int64, v int64) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// ---- in-process nodes ----

type inProcRunner struct {
	led     *memLedger
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	counts  []*countingStore
	stores  []interface{ Close() error }
	names   []string
	mu      sync.Mutex
	exits   []string
	live    []bool
	ru0     syscall.Rusage
	cpu     float64
	peakRSS int64
}

func startInProcRunner(ctx context.Context, o benchOpts, p nodeParams) (*inProcRunner, error) {
	r := &inProcRunner{led: &memLedger{}, exits: make([]string, o.nodes), live: make([]bool, o.nodes)}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r.ru0)
	lvl, err := zerolog.ParseLevel(o.logLevel)
	if err != nil {
		lvl = zerolog.ErrorLevel
	}
	log := zerolog.New(os.Stderr).Level(lvl).With().Timestamp().Logger()
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	var scheds []*easyjob.Scheduler
	for i := range o.nodes {
		pg, err := postgres.Open(ctx, p.DSN)
		if err != nil {
			r.stop()
			return nil, err
		}
		store, cs := newCountingStore(pg)
		name := fmt.Sprintf("n%d", i)
		cfg := p.config(name, &log)
		cfg.Store = store
		s, err := easyjob.New(cfg)
		if err == nil {
			err = registerTasks(s, p, r.led)
		}
		if err != nil {
			_ = pg.Close()
			r.stop()
			return nil, err
		}
		r.counts, r.stores, r.names = append(r.counts, cs), append(r.stores, store), append(r.names, name)
		scheds = append(scheds, s)
	}
	for i, s := range scheds {
		r.live[i] = true
		r.wg.Go(func() {
			err := s.Run(runCtx)
			r.mu.Lock()
			r.live[i] = false
			if err != nil {
				r.exits[i] = err.Error()
			} else if runCtx.Err() == nil {
				r.exits[i] = "Run returned nil before the end"
			}
			r.mu.Unlock()
		})
	}
	return r, nil
}

func (r *inProcRunner) fireCount() int { return r.led.len() }

func (r *inProcRunner) running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := 0
	for _, l := range r.live {
		if l {
			k++
		}
	}
	return k
}

func (r *inProcRunner) snapshot() []storeStats {
	out := make([]storeStats, len(r.counts))
	for i, c := range r.counts {
		out[i] = c.snapshot()
	}
	return out
}

func (r *inProcRunner) stop() {
	r.cancel()
	r.wg.Wait()
	for _, s := range r.stores {
		_ = s.Close()
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano() - r.ru0.Utime.Nano() - r.ru0.Stime.Nano()).Seconds()
	r.peakRSS = ru.Maxrss * 1024
}

func (r *inProcRunner) results() ([]fire, []nodeResult) {
	fires := r.led.snapshot()
	nodes := make([]nodeResult, len(r.counts))
	for i, c := range r.counts {
		st := c.snapshot()
		nodes[i] = nodeResult{
			Name: r.names[i], NodeIDs: st.NodeIDs, RoundTrips: st.RoundTrips(), ClaimConflicts: st.Conflicts(),
			FencedFinishes: st.FencedFinish + st.StartLost, Exit: r.exits[i], final: st,
			CPUSeconds: r.cpu, PeakRSSBytes: r.peakRSS, wholeProcessCPU: true,
		}
		for _, f := range fires {
			if contains64(st.NodeIDs, f.Node) {
				nodes[i].Fires++
			}
		}
	}
	return fires, nodes
}

// ---- node processes ----

type procRunner struct {
	c     *procCluster
	slots int
}

func startProcRunner(o benchOpts, p nodeParams) (*procRunner, error) {
	dir, err := os.MkdirTemp(o.dir, o.label+"-")
	if err != nil {
		return nil, err
	}
	c, err := newProcCluster(dir, p, o.nodes)
	if err != nil {
		return nil, err
	}
	c.extra = []string{"--log-level", o.logLevel}
	r := &procRunner{c: c, slots: o.nodes}
	for i := range o.nodes {
		if _, err := c.start(i); err != nil {
			c.stopAll(10 * time.Second)
			return nil, err
		}
	}
	return r, nil
}

func (r *procRunner) fireCount() int { return r.c.poll() }

func (r *procRunner) running() int {
	k := 0
	for _, inc := range r.c.current() {
		if inc != nil {
			k++
		}
	}
	return k
}

func (r *procRunner) snapshot() []storeStats {
	incs := r.c.all()
	out := make([]storeStats, len(incs))
	for i, inc := range incs {
		out[i], _ = inc.stats()
	}
	return out
}

func (r *procRunner) stop() { r.c.stopAll(40 * time.Second) }

func (r *procRunner) results() ([]fire, []nodeResult) {
	r.c.poll()
	fires := r.c.fires()
	incs := r.c.all()
	nodes := make([]nodeResult, len(incs))
	for i, inc := range incs {
		st, _ := inc.stats()
		cpu, rss, _ := inc.rusage()
		if st.PeakRSSBytes > 0 {
			rss = st.PeakRSSBytes // see storeStats.PeakRSSBytes
		}
		exit := ""
		if info := inc.exitInfo(); info != "exit status 0" {
			exit = info
		}
		nodes[i] = nodeResult{
			Name: inc.Name, NodeIDs: st.NodeIDs, RoundTrips: st.RoundTrips(), ClaimConflicts: st.Conflicts(),
			FencedFinishes: st.FencedFinish + st.StartLost, Exit: exit, final: st, CPUSeconds: cpu, PeakRSSBytes: rss,
		}
		for _, f := range fires {
			if f.Proc == inc.Idx {
				nodes[i].Fires++
			}
		}
	}
	return fires, nodes
}

// ---- output ----

func (t *trialResult) print(w io.Writer) {
	fmt.Fprintf(w, "easyjob bench: %d nodes (%s), %d tasks on %q, strategy %s, %.0fs\n\n",
		t.Nodes, t.Mode, t.Tasks, t.Cron, t.Strategy, t.DurationSeconds)
	var tb table
	tb.add("fires", fmt.Sprintf("%d  (%.1f/s)", t.Fires, t.FiresPerSec))
	tb.add("start lag", t.Steady.Lag.String()+"  [fires scheduled in the steady window]")
	tb.add("duplicates", fmt.Sprintf("%d  (same task and scheduled time run twice)", t.Duplicates))
	tb.add("missed", fmt.Sprintf("%d of %d expected  (steady window %s..%s UTC)", t.Steady.Missed, t.Steady.Expected,
		t.Steady.WindowFrom.UTC().Format("15:04:05"), t.Steady.WindowTo.UTC().Format("15:04:05")))
	tb.add("claim conflicts", fmt.Sprintf("%d of %d claims attempted  (%d won)", t.ClaimConflicts, t.ClaimAsked, t.ClaimWon))
	tb.add("round trips/fire", fmt.Sprintf("%.3f  [%s]", t.RoundTripsPerFire, perFireF(t.CallsPerFire)))
	tb.add("queries/s/node", fmt.Sprintf("%.2f", t.QueriesPerSecNode))
	tb.add("fenced finishes", t.FencedFinishes)
	if len(t.StoreErrors) > 0 {
		tb.add("store errors", fmt.Sprint(t.StoreErrors))
	}
	tb.write(w, "  ")
	fmt.Fprintln(w)
	var nt table
	cpuHdr, rssHdr := "cpu-s", "peak-rss"
	if t.CPUWholeProcess {
		cpuHdr, rssHdr = "cpu-s(process)", "peak-rss(process)"
	}
	nt.add("node", "ids", "fires", cpuHdr, rssHdr, "round-trips", "queries/s", "conflicts", "fenced", "exit")
	for _, n := range t.PerNode {
		exit := n.Exit
		if exit == "" {
			exit = "ok"
		}
		nt.add(n.Name, fmt.Sprint(n.NodeIDs), n.Fires, fmt.Sprintf("%.2f", n.CPUSeconds), mib(n.PeakRSSBytes),
			n.RoundTrips, fmt.Sprintf("%.2f", n.QueriesPerSec), n.ClaimConflicts, n.FencedFinishes, exit)
	}
	nt.write(w, "  ")
	if len(t.DuplicateExamples) > 0 {
		fmt.Fprintln(w, "\n  duplicate runs (first groups):")
		for _, s := range t.DuplicateExamples {
			fmt.Fprintln(w, "    "+s)
		}
	}
	if len(t.MissedExamples) > 0 {
		fmt.Fprintln(w, "\n  missed fires (first ones):")
		for _, s := range t.MissedExamples {
			fmt.Fprintln(w, "    "+s)
		}
	}
	fmt.Fprintln(w)
}

func (t *trialResult) printIdle(w io.Writer) {
	fmt.Fprintf(w, "idle cost: %d nodes (%s), %d tasks on %q (never due), %.0fs\n\n", t.Nodes, t.Mode, t.Tasks, t.Cron, t.DurationSeconds)
	var tb table
	tb.add("queries/s per node", fmt.Sprintf("%.2f  [%s]", t.QueriesPerSecNode, perSecF(t.CallsPerSecNode)))
	for _, n := range t.PerNode {
		tb.add("  "+n.Name, fmt.Sprintf("%.2f queries/s, cpu %.2fs, peak rss %s", n.QueriesPerSec, n.CPUSeconds, mib(n.PeakRSSBytes)))
	}
	tb.add("fires", t.Fires)
	tb.write(w, "  ")
	fmt.Fprintln(w)
}

func perFireF(m map[string]float64) string { return fmtRates(m, "%s %.3f") }
func perSecF(m map[string]float64) string  { return fmtRates(m, "%s %.2f") }

func fmtRates(m map[string]float64, f string) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0.0005 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf(f, k, m[k])
	}
	return s
}

// ---- find-capacity ----

type capacityTrial struct {
	Tasks       int     `json:"tasks"`
	FiresPerSec float64 `json:"fires_per_sec"`
	P99LagMS    float64 `json:"p99_lag_ms"`
	MaxLagMS    float64 `json:"max_lag_ms"`
	Missed      int     `json:"missed"`
	Duplicates  int     `json:"duplicates"`
	RoundTrips  float64 `json:"round_trips_per_fire"`
	Held        bool    `json:"held"`
	Why         string  `json:"why,omitempty"`
	CPUSeconds  float64 `json:"cpu_seconds_max_node"`
}

type capacityResult struct {
	Nodes          int             `json:"nodes"`
	Mode           string          `json:"mode"`
	Cron           string          `json:"cron"`
	LagBoundMS     float64         `json:"lag_bound_ms"`
	TrialSeconds   float64         `json:"trial_seconds"`
	Trials         []capacityTrial `json:"trials"`
	BestTasks      int             `json:"best_tasks"`
	RatePerTask    float64         `json:"fires_per_sec_per_task"`
	BestFiresPerSc float64         `json:"best_fires_per_sec"`
	Ceiling        bool            `json:"hit_capacity_max,omitempty"`
}

func findCapacity(ctx context.Context, o benchOpts, bound time.Duration, start, maxK int, trial time.Duration, steps int) (*capacityResult, error) {
	res := &capacityResult{Nodes: o.nodes, Mode: "in-process", Cron: o.params.Cron, LagBoundMS: ms(bound), TrialSeconds: trial.Seconds()}
	if o.procs {
		res.Mode = "processes"
	}
	times, err := cronTimes(o.params.Cron, time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		return nil, err
	}
	res.RatePerTask = float64(len(times)) / 3600
	try := func(k int) (bool, error) {
		to := o
		to.params.Tasks, to.duration = k, trial
		to.label = fmt.Sprintf("capacity K=%d", k)
		r, err := runTrial(ctx, to)
		if err != nil {
			return false, err
		}
		ct := capacityTrial{Tasks: k, FiresPerSec: r.FiresPerSec, P99LagMS: r.Steady.Lag.P99, MaxLagMS: r.Steady.Lag.Max,
			Missed: r.Steady.Missed, Duplicates: r.Duplicates, RoundTrips: r.RoundTripsPerFire}
		for _, n := range r.PerNode {
			ct.CPUSeconds = max(ct.CPUSeconds, n.CPUSeconds)
		}
		switch {
		case r.Steady.Missed > 0:
			ct.Why = fmt.Sprintf("%d missed", r.Steady.Missed)
		case r.Steady.Lag.P99 > ms(bound):
			ct.Why = fmt.Sprintf("p99 lag %s > %s", fmtMS(r.Steady.Lag.P99), fmtMS(ms(bound)))
		case r.Duplicates > 0:
			ct.Why = fmt.Sprintf("%d duplicates", r.Duplicates)
		default:
			ct.Held = true
		}
		res.Trials = append(res.Trials, ct)
		if !o.quiet {
			fmt.Fprintf(os.Stderr, "capacity: K=%d held=%v p99=%s missed=%d %s\n", k, ct.Held, fmtMS(ct.P99LagMS), ct.Missed, ct.Why)
		}
		return ct.Held, nil
	}
	lo, hi := 0, 0
	for k := start; ; k *= 2 {
		if k > maxK {
			k = maxK
		}
		ok, err := try(k)
		if err != nil {
			return res, err
		}
		if !ok {
			hi = k
			break
		}
		lo = k
		if k == maxK {
			res.Ceiling = true
			break
		}
	}
	for i := 0; i < steps && hi > 0 && lo > 0 && hi-lo > max(lo/20, 10); i++ {
		mid := (lo + hi) / 2
		ok, err := try(mid)
		if err != nil {
			return res, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	res.BestTasks = lo
	res.BestFiresPerSc = float64(lo) * res.RatePerTask
	return res, nil
}

func (c *capacityResult) print(w io.Writer) {
	fmt.Fprintf(w, "easyjob bench --find-capacity: %d nodes (%s), cron %q, bound p99 start lag <= %s and no missed fire, %.0fs per trial\n\n",
		c.Nodes, c.Mode, c.Cron, fmtMS(c.LagBoundMS), c.TrialSeconds)
	var tb table
	tb.add("K", "fires/s", "p99 lag", "max lag", "missed", "dups", "rt/fire", "max node cpu-s", "held")
	for _, t := range c.Trials {
		held := "yes"
		if !t.Held {
			held = "no: " + t.Why
		}
		tb.add(t.Tasks, fmt.Sprintf("%.0f", t.FiresPerSec), fmtMS(t.P99LagMS), fmtMS(t.MaxLagMS), t.Missed, t.Duplicates,
			fmt.Sprintf("%.2f", t.RoundTrips), fmt.Sprintf("%.1f", t.CPUSeconds), held)
	}
	tb.write(w, "  ")
	ceiling := ""
	if c.Ceiling {
		ceiling = " (the search ceiling --capacity-max; the real capacity may be higher)"
	}
	fmt.Fprintf(w, "\n  largest held: K = %d tasks × %.3g fires/s each = %.0f fires/s%s\n\n", c.BestTasks, c.RatePerTask, c.BestFiresPerSc, ceiling)
}
