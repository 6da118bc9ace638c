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

// capacityOpts is the search of bench --find-capacity.
type capacityOpts struct {
	bound time.Duration // p99 start lag bound
	start int           // first K
	max   int           // largest K tried; 0 = until a trial fails (safetyMaxTasks at most)
	trial time.Duration // duration of each trial
	steps int           // bisection steps after the first failure
}

func (c *capacityOpts) addFlags(fs *flag.FlagSet) {
	fs.DurationVar(&c.bound, "lag-bound", 100*time.Millisecond, "find-capacity: p99 start lag bound")
	fs.IntVar(&c.start, "capacity-start", 250, "find-capacity: first K")
	fs.IntVar(&c.max, "capacity-max", 0, fmt.Sprintf("find-capacity: largest K tried (0 = raise K until a trial fails, %d at most)", safetyMaxTasks))
	fs.DurationVar(&c.trial, "capacity-trial", 15*time.Second, "find-capacity: duration of each trial")
	fs.IntVar(&c.steps, "capacity-steps", 3, "find-capacity: bisection steps after the first failure")
}

// check validates the search's flags.
func (c *capacityOpts) check() error {
	if c.start < 1 || c.max < 0 || c.steps < 0 || c.bound <= 0 {
		return errors.New("need --capacity-start >= 1, --capacity-max >= 0, --capacity-steps >= 0, --lag-bound > 0")
	}
	if c.trial <= steadyStart+steadyEndMargin {
		return errors.New("need --capacity-trial > 5s")
	}
	return nil
}

// capacityTrial is one trial of the search.
type capacityTrial struct {
	Tasks       int     `json:"tasks"`
	FiresPerSec float64 `json:"fires_per_sec"` // in the steady window: registering K tasks is not counted
	P99LagMS    float64 `json:"p99_lag_ms"`
	MaxLagMS    float64 `json:"max_lag_ms"`
	Missed      int     `json:"missed"`
	Duplicates  int     `json:"duplicates"`
	RoundTrips  float64 `json:"round_trips_per_fire"`
	Held        bool    `json:"held"`
	Why         string  `json:"why,omitempty"`
	CPUSeconds  float64 `json:"cpu_seconds_max_node"`
	dbCost
}

// capacityResult is the outcome of bench --find-capacity.
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
	FailedTasks    int             `json:"smallest_failed_tasks,omitempty"` // 0: no trial failed
	Ceiling        bool            `json:"hit_capacity_max,omitempty"`      // every trial held up to the user's --capacity-max
	SafetyCap      int             `json:"hit_safety_cap,omitempty"`        // every trial held up to safetyMaxTasks
	// WriteLimit is what the finish write pattern alone sustains on the
	// server, measured with pgbench after the search (nil: skipped, and
	// WriteLimitSkipped says why); CapacityShare is BestFiresPerSc over it.
	WriteLimit        *writeLimit `json:"pgbench_write_limit,omitempty"`
	WriteLimitSkipped string      `json:"pgbench_write_limit_skipped,omitempty"`
	CapacityShare     float64     `json:"share_of_pgbench_write_limit,omitempty"`
}

// judgeTrial says whether trial r held K: every fire of its steady window
// ran, once, with p99 start lag within bound. A window that owed no fire
// (the tasks' first fire came after it: registering K tasks took most of
// the trial) proves nothing and does not hold.
func judgeTrial(r *trialResult, bound time.Duration) (held bool, why string) {
	switch {
	case r.Steady.Expected == 0:
		return false, "no fire owed in the steady window (first fire after it: lengthen --capacity-trial)"
	case r.Steady.Missed > 0:
		return false, fmt.Sprintf("%d missed", r.Steady.Missed)
	case r.Steady.Lag.P99 > ms(bound):
		return false, fmt.Sprintf("p99 lag %s > %s", fmtMS(r.Steady.Lag.P99), fmtMS(ms(bound)))
	case r.Duplicates > 0:
		return false, fmt.Sprintf("%d duplicates", r.Duplicates)
	}
	return true, ""
}

// findCapacity doubles K from c.start until a trial misses a fire, passes
// the lag bound or duplicates one, then bisects between the last K held
// and the first that failed (capacitySearch). There is no ceiling but
// --capacity-max, when set, and safetyMaxTasks.
func findCapacity(ctx context.Context, o benchOpts, c capacityOpts) (*capacityResult, error) {
	bound, trial := c.bound, c.trial
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
		ct := capacityTrial{Tasks: k, FiresPerSec: r.Steady.Rate, P99LagMS: r.Steady.Lag.P99, MaxLagMS: r.Steady.Lag.Max,
			Missed: r.Steady.Missed, Duplicates: r.Duplicates, RoundTrips: r.RoundTripsPerFire, dbCost: r.dbCost}
		for _, n := range r.PerNode {
			ct.CPUSeconds = max(ct.CPUSeconds, n.CPUSeconds)
		}
		ct.Held, ct.Why = judgeTrial(r, bound)
		res.Trials = append(res.Trials, ct)
		if !o.quiet {
			fmt.Fprintf(os.Stderr, "capacity: K=%d held=%v p99=%s missed=%d db_cpu_us/fire=%s wal_bytes/fire=%s stmt_us/fire=%s %s\n",
				k, ct.Held, fmtMS(ct.P99LagMS), ct.Missed, fmtPerFire(ct.DBCPUMicrosPerFire, 1),
				fmtPerFire(ct.WALBytesPerFire, 0), fmtPerFire(ct.StmtMicrosPerFire, 1), ct.Why)
		}
		return ct.Held, nil
	}
	s := newCapacitySearch(c.start, c.max, c.steps)
	for {
		k, ok := s.next()
		if !ok {
			break
		}
		held, err := try(k)
		if err != nil {
			return res, err
		}
		s.record(k, held)
	}
	switch s.capped() {
	case "capacity-max":
		res.Ceiling = true
	case "safety":
		res.SafetyCap = safetyMaxTasks
	}
	res.BestTasks, res.FailedTasks = s.best(), s.failed()
	res.BestFiresPerSc = float64(res.BestTasks) * res.RatePerTask
	return res, nil
}

// addWriteLimit records the pgbench measurement wl (or why it was
// skipped) and the capacity's share of it.
func (c *capacityResult) addWriteLimit(wl *writeLimit, skipped error) {
	if skipped != nil {
		c.WriteLimitSkipped = skipped.Error()
		return
	}
	c.WriteLimit = wl
	if wl.FiresPerSec > 0 {
		c.CapacityShare = c.BestFiresPerSc / wl.FiresPerSec
	}
}

func (c *capacityResult) print(w io.Writer) {
	fmt.Fprintf(w, "easyjob bench --find-capacity: %d nodes (%s), cron %q, bound p99 start lag <= %s and no missed fire, %.0fs per trial\n\n",
		c.Nodes, c.Mode, c.Cron, fmtMS(c.LagBoundMS), c.TrialSeconds)
	var tb table
	tb.add("K", "steady fires/s", "p99 lag", "max lag", "missed", "dups", "rt/fire", "max node cpu-s",
		"db-cpu-us/fire", "wal-B/fire", "stmt-us/fire", "held")
	for _, t := range c.Trials {
		held := "yes"
		if !t.Held {
			held = "no: " + t.Why
		}
		tb.add(t.Tasks, fmt.Sprintf("%.0f", t.FiresPerSec), fmtMS(t.P99LagMS), fmtMS(t.MaxLagMS), t.Missed, t.Duplicates,
			fmt.Sprintf("%.2f", t.RoundTrips), fmt.Sprintf("%.1f", t.CPUSeconds), fmtPerFire(t.DBCPUMicrosPerFire, 1),
			fmtPerFire(t.WALBytesPerFire, 0), fmtPerFire(t.StmtMicrosPerFire, 1), held)
	}
	tb.write(w, "  ")
	var why string
	switch {
	case c.Ceiling:
		why = " (every trial held up to --capacity-max, the search ceiling you set; the real capacity may be higher)"
	case c.SafetyCap > 0:
		why = fmt.Sprintf(" (every trial held up to the safety cap of %d tasks; set --capacity-max to go further)", c.SafetyCap)
	case c.BestTasks == 0 && len(c.Trials) > 0:
		why = fmt.Sprintf(" (the first trial, K = %d, failed: lower --capacity-start)", c.Trials[0].Tasks)
	case c.FailedTasks > 0:
		why = fmt.Sprintf(" (K = %d failed)", c.FailedTasks)
	}
	fmt.Fprintf(w, "\n  largest held: K = %d tasks × %.3g fires/s each = %.0f fires/s%s\n", c.BestTasks, c.RatePerTask, c.BestFiresPerSc, why)
	switch {
	case c.WriteLimit != nil && c.WriteLimit.FiresPerSec > 0:
		fmt.Fprintf(w, "  %.0f fires/s = %.1f %% of the pgbench write-pattern limit %.0f fires/s measured now\n",
			c.BestFiresPerSc, 100*c.CapacityShare, c.WriteLimit.FiresPerSec)
		c.WriteLimit.printDetail(w, "    ")
	case c.WriteLimit != nil:
		fmt.Fprintf(w, "  pgbench write-pattern limit: no row written (%s)\n", c.WriteLimit.Note)
	case c.WriteLimitSkipped != "":
		fmt.Fprintf(w, "  pgbench write-pattern limit: skipped: %s\n", c.WriteLimitSkipped)
	}
	fmt.Fprintln(w)
}
