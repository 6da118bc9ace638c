package harness

import (
	"context"
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
	max   int           // largest K tried
	trial time.Duration // duration of each trial
	steps int           // bisection steps after the first failure
}

func (c *capacityOpts) addFlags(fs *flag.FlagSet) {
	fs.DurationVar(&c.bound, "lag-bound", 100*time.Millisecond, "find-capacity: p99 start lag bound")
	fs.IntVar(&c.start, "capacity-start", 250, "find-capacity: first K")
	fs.IntVar(&c.max, "capacity-max", 16000, "find-capacity: largest K tried")
	fs.DurationVar(&c.trial, "capacity-trial", 15*time.Second, "find-capacity: duration of each trial")
	fs.IntVar(&c.steps, "capacity-steps", 3, "find-capacity: bisection steps after the first failure")
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
	Ceiling        bool            `json:"hit_capacity_max,omitempty"`
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
// the lag bound or duplicates one (or K reaches c.max), then bisects
// between the last K held and the first that failed.
func findCapacity(ctx context.Context, o benchOpts, c capacityOpts) (*capacityResult, error) {
	bound, maxK, trial, steps := c.bound, c.max, c.trial, c.steps
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
	lo, hi := 0, 0
	for k := c.start; ; k *= 2 {
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
	ceiling := ""
	if c.Ceiling {
		ceiling = " (the search ceiling --capacity-max; the real capacity may be higher)"
	}
	fmt.Fprintf(w, "\n  largest held: K = %d tasks × %.3g fires/s each = %.0f fires/s%s\n\n", c.BestTasks, c.RatePerTask, c.BestFiresPerSc, ceiling)
}
