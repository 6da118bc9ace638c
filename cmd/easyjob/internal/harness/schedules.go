package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// benchHandler is the handler kind the nodes of a runtime-schedules trial
// register (easyjob.Handle) and every schedule of it names.
const benchHandler = "bench"

// benchArgs are the arguments of every runtime schedule of a trial: its
// index, which the handler ignores (a schedule usually carries some).
type benchArgs struct {
	I int `json:"i"`
}

// burstLead is how far into the measured window the burst second falls;
// burstTail is what a trial must run past it for the burst's fires to be
// in the ledger.
const (
	burstLead = 20 * time.Second
	burstTail = 5 * time.Second
)

// quietAfter is how long past the creation the schedules that must not
// fall due stay quiet (see quietCron): a creation of millions and the
// trial after it fit many times.
const quietAfter = 2 * time.Hour

// scheduleOpts is bench's runtime-schedules mode (--schedules): instead of
// K tasks registered in code, the nodes register one handler kind and the
// harness creates the schedules that name it through the public API
// (Client.CreateMany) before the nodes start.
type scheduleOpts struct {
	total   int  // --schedules N: runtime schedules stored (0: tasks registered in code)
	burst   int  // --burst B: one-off schedules more, all due in one second burstLead into the measured window
	batch   int  // --create-batch: schedules per CreateMany call
	writers int  // --create-writers: concurrent CreateMany callers
	analyze bool // --analyze: ANALYZE the database after the creation
	// spread is --spread: the K schedules get easyjob.Spread(spread), so
	// their fires come due over the window instead of in one second.
	spread time.Duration
	lists  bool // measure the task lists after the trial (not in the idle trial)
}

func (s *scheduleOpts) addFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.total, "schedules", 0, "runtime-schedules mode: create N schedules with Client.CreateMany before the nodes start (which register one handler kind instead of --tasks tasks); --tasks K of them fire every second (--cron), the others daily at times of day outside the run; 0 = tasks registered in code")
	fs.IntVar(&s.burst, "burst", 0, fmt.Sprintf("with --schedules: B one-off schedules more, all due in the same second, about %s into the measured window; their start lag is reported apart", burstLead))
	fs.IntVar(&s.batch, "create-batch", 5000, "with --schedules: schedules per Client.CreateMany call (one transaction)")
	fs.IntVar(&s.writers, "create-writers", 2, "with --schedules: goroutines calling Client.CreateMany at once")
	fs.DurationVar(&s.spread, "spread", 0, "with --schedules: give the --tasks K schedules easyjob.Spread(d): each one's grid moved by a fixed offset in [0, d) hashed from its name (0 = none); the steady window then expects each fire at cron time + offset (the report's peak second: the busiest scheduled second's start lag)")
	fs.BoolVar(&s.analyze, "analyze", true, "with --schedules: ANALYZE the database after the creation, as autovacuum soon would (a server with autovacuum off would plan every query as for an empty table), and CHECKPOINT its WAL")
}

// active reports whether the trial runs on runtime schedules.
func (s scheduleOpts) active() bool { return s.total > 0 }

// check validates the mode's flags against the trial's K (tasks) and
// duration.
func (s scheduleOpts) check(tasks int, duration time.Duration) error {
	if s.total < 0 || s.burst < 0 {
		return errors.New("need --schedules >= 0 and --burst >= 0")
	}
	if !s.active() {
		if s.burst > 0 {
			return errors.New("--burst needs --schedules")
		}
		return nil
	}
	if tasks < 0 || tasks > s.total {
		return fmt.Errorf("--tasks K is how many of the --schedules %d fire every second: need 0 <= K <= %d", s.total, s.total)
	}
	if s.spread < 0 || s.spread > 24*time.Hour {
		return errors.New("need 0 <= --spread <= 24h")
	}
	if tasks == 0 && s.burst == 0 {
		return errors.New("with --schedules, need --tasks >= 1 or --burst >= 1: nothing would fall due")
	}
	if s.batch < 1 || s.writers < 1 {
		return errors.New("need --create-batch >= 1 and --create-writers >= 1")
	}
	if duration > 6*time.Hour {
		return errors.New("with --schedules, need --duration <= 6h (the schedules that must stay quiet are spread over the rest of the day)")
	}
	if minimum := steadyStart + burstLead + burstTail + steadyEndMargin; s.burst > 0 && duration < minimum {
		return fmt.Errorf("with --burst, need --duration >= %s: the burst falls %s into the measured window", minimum, burstLead)
	}
	return nil
}

// schedulePlan lays out the runtime schedules of one trial in creation
// order: the N−K quiet ones (daily, never due in the run), then the K
// every-second ones, then the B burst ones (one-offs at burstAt). The
// quiet ones come first so that the others are created last, just
// before the nodes start.
type schedulePlan struct {
	total, tasks, burst int
	cron                string        // of the K
	spread              time.Duration // of the K (easyjob.Spread); 0: none
	quietFrom, quietTo  time.Time     // when no quiet schedule may fall due
	burstAt             time.Time     // set by schedule when it builds the first burst schedule
}

// newSchedulePlan plans the schedules of so with K = tasks on cron,
// created from now on.
func newSchedulePlan(so scheduleOpts, tasks int, cron string, now time.Time) *schedulePlan {
	return &schedulePlan{
		total: so.total, tasks: tasks, burst: so.burst, cron: cron, spread: so.spread,
		quietFrom: now.Add(-time.Minute), quietTo: now.Add(quietAfter),
	}
}

// shiftSpan is how far the plan's spread moves a fire at most: the
// steady window's expected cron times start this much earlier. A nil
// plan (tasks registered in code) moves none.
func (pl *schedulePlan) shiftSpan() time.Duration {
	if pl == nil {
		return 0
	}
	return pl.spread
}

// count is the number of schedules the plan creates.
func (pl *schedulePlan) count() int { return pl.total + pl.burst }

// schedule returns schedule k of the creation order. The first burst
// schedule it builds fixes burstAt, burstLead into the measured window
// of nodes that start now (the burst is created last).
func (pl *schedulePlan) schedule(k int) easyjob.Schedule {
	quiet := pl.total - pl.tasks
	switch {
	case k < quiet:
		i := pl.tasks + k
		return easyjob.Schedule{Name: taskName(i), Handler: benchHandler, Cron: quietCron(k, quiet, pl.quietFrom, pl.quietTo), Args: benchArgs{I: i}}
	case k < pl.total:
		i := k - quiet
		sc := easyjob.Schedule{Name: taskName(i), Handler: benchHandler, Cron: pl.cron, Args: benchArgs{I: i}}
		if pl.spread > 0 {
			sc.Options = []easyjob.Option{easyjob.Spread(pl.spread)}
		}
		return sc
	}
	if pl.burstAt.IsZero() {
		pl.burstAt = time.Now().Add(steadyStart + burstLead).Truncate(time.Second).Add(time.Second)
	}
	j := k - pl.total
	return easyjob.Schedule{Name: burstName(j), Handler: benchHandler, At: pl.burstAt, Args: benchArgs{I: k}}
}

// burstName names burst schedule j.
func burstName(j int) string { return fmt.Sprintf("b%05d", j) }

// isBurst reports whether name is a burst schedule's.
func isBurst(name string) bool {
	_, ok := nameIndex(name, "b")
	return ok
}

// isQuiet reports whether name is one of the plan's quiet schedules
// (taskName(i), i >= K), which must not fire during the run.
func (pl *schedulePlan) isQuiet(name string) bool {
	i, ok := nameIndex(name, "t")
	return ok && i >= pl.tasks && i < pl.total
}

// nameIndex parses prefix followed by a decimal index.
func nameIndex(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	return i, err == nil && i >= 0
}

// quietCron returns the daily cron ("S M H * * *", UTC) of quiet schedule
// i of n: their times of day are spread evenly over the day but for
// [from, to], so that none of them falls due in it. to − from must be
// shorter than a day.
func quietCron(i, n int, from, to time.Time) string {
	from, to = from.Truncate(time.Second), to.Add(time.Second-1).Truncate(time.Second)
	span := int64(to.Sub(from) / time.Second)
	free := max(86400-span-1, 1) // the seconds of a day after to and before from's next
	off := 1 + int64(i)*free/int64(max(n, 1))
	t := to.Add(time.Duration(off) * time.Second).UTC()
	return fmt.Sprintf("%d %d %d * * *", t.Second(), t.Minute(), t.Hour())
}

// creation is what creating a trial's schedules measured: CreateMany
// calls of a batch each from several writers, before any node ran.
type creation struct {
	Schedules    int       `json:"schedules"`
	Batch        int       `json:"batch"`
	Writers      int       `json:"writers"`
	Seconds      float64   `json:"seconds"`
	PerSec       float64   `json:"schedules_per_sec"`
	BatchLatency latency   `json:"batch_latency"` // one CreateMany call
	BurstAt      time.Time `json:"burst_at,omitzero"`
	// AnalyzeSeconds is how long the ANALYZE and CHECKPOINT after the creation took (0:
	// --analyze=false); Autovacuum is the server's setting.
	AnalyzeSeconds float64 `json:"analyze_seconds"`
	Autovacuum     string  `json:"server_autovacuum"`
	// What the creation cost per schedule: CPU of the creating process
	// (this one: the client's checks and encoding), of the database
	// server (nil when it cannot be read: not local), and WAL written.
	ClientCPUMicros *float64 `json:"client_cpu_us_per_schedule"`
	ServerCPUMicros *float64 `json:"server_cpu_us_per_schedule"`
	WALBytes        *float64 `json:"wal_bytes_per_schedule"`
}

// addCost sets the creation's cost per schedule from the CPU seconds this
// process spent on it and the server's counters before and after it.
func (c *creation) addCost(cpuSeconds float64, a, b dbSample) {
	if c.Schedules == 0 {
		return
	}
	per := func(v float64) *float64 { v /= float64(c.Schedules); return &v }
	c.ClientCPUMicros = per(cpuSeconds * 1e6)
	if a.errs[dbCPU] == nil && b.errs[dbCPU] == nil {
		c.ServerCPUMicros = per(b.vals[dbCPU] - a.vals[dbCPU])
	}
	if a.errs[dbWAL] == nil && b.errs[dbWAL] == nil {
		c.WALBytes = per(b.vals[dbWAL] - a.vals[dbWAL])
	}
}

// selfCPU returns the CPU seconds (user and system) this process has used.
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// createSchedules creates the schedules of pl in group on dsn's database
// with Client.CreateMany (AllowUnknownHandler: no node runs yet), in
// batches from so.writers goroutines, with a progress line every second.
func createSchedules(ctx context.Context, dsn, group string, pl *schedulePlan, so scheduleOpts, o benchOpts) (creation, error) {
	c, err := easyjob.NewClient(ctx, easyjob.Config{DSN: dsn, SkipMigrate: true, Group: group})
	if err != nil {
		return creation{}, err
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	n := pl.count()
	batches := make(chan []easyjob.Schedule)
	go func() { // one producer: the plan's burstAt is set here
		defer close(batches)
		for k := 0; k < n; k += so.batch {
			b := make([]easyjob.Schedule, 0, min(so.batch, n-k))
			for i := k; i < k+cap(b); i++ {
				b = append(b, pl.schedule(i))
			}
			select {
			case batches <- b:
			case <-ctx.Done():
				return
			}
		}
	}()

	var (
		done     atomic.Int64
		mu       sync.Mutex
		lats     []time.Duration
		firstErr error
		wg       sync.WaitGroup
	)
	t0 := time.Now()
	for range so.writers {
		wg.Go(func() {
			for b := range batches {
				start := time.Now()
				_, err := c.CreateMany(ctx, b, easyjob.AllowUnknownHandler())
				took := time.Since(start)
				mu.Lock()
				lats = append(lats, took)
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				mu.Unlock()
				if err != nil {
					return
				}
				done.Add(int64(len(b)))
			}
		})
	}
	stopProgress := creationProgress(o, &done, n, t0)
	stopProfile := creationProfile()
	wg.Wait()
	stopProfile()
	took := time.Since(t0)
	stopProgress()
	for range batches { // a writer that failed leaves the producer waiting
	}
	if firstErr != nil {
		if ctx.Err() != nil && errors.Is(firstErr, context.Canceled) {
			return creation{}, errInterrupted
		}
		return creation{}, fmt.Errorf("create schedules: %w", firstErr)
	}
	if err := ctx.Err(); err != nil {
		return creation{}, errInterrupted
	}
	return creation{
		Schedules: n, Batch: so.batch, Writers: so.writers, Seconds: took.Seconds(),
		PerSec: float64(n) / took.Seconds(), BatchLatency: summarize(lats), BurstAt: pl.burstAt,
	}, nil
}

// creationProgress prints the creation's progress every second until the
// returned stop is called.
func creationProgress(o benchOpts, done *atomic.Int64, n int, t0 time.Time) (stop func()) {
	prog := newProgress(o.quiet)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		last, lastT := int64(0), t0
		for {
			select {
			case <-quit:
				return
			case now := <-t.C:
				k := done.Load()
				prog.printf("%s create %3.0fs  schedules %d/%d  %.0f/s",
					o.label, now.Sub(t0).Seconds(), k, n, float64(k-last)/now.Sub(lastT).Seconds())
				last, lastT = k, now
			}
		}
	})
	return func() {
		close(quit)
		wg.Wait()
		prog.done()
	}
}

// analyzeStats reads the server's autovacuum setting and, with run, runs
// ANALYZE on dsn's database: a server running autovacuum gathers the new
// rows' statistics within a minute or so of a bulk creation; one without
// (a CI server may run with autovacuum off) would plan the trial's
// queries as for an empty table, which is not what a service would see.
// A CHECKPOINT follows: the creation's WAL (about 1.2 KB a schedule, over
// a GB for a million) would otherwise set one off inside the measured
// window, the cost of the bulk load rather than of the schedules stored.
// A role that may not CHECKPOINT (pg_checkpoint) skips it.
func analyzeStats(ctx context.Context, dsn string, run bool) (took time.Duration, autovacuum string, err error) {
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		return 0, "", err
	}
	defer s.Close()
	db := s.DB().DB
	if err := db.QueryRowContext(ctx, "SHOW autovacuum").Scan(&autovacuum); err != nil {
		return 0, "", fmt.Errorf("read autovacuum: %w", err)
	}
	if !run {
		return 0, autovacuum, nil
	}
	start := time.Now()
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		return 0, autovacuum, fmt.Errorf("analyze: %w", err)
	}
	_, _ = db.ExecContext(ctx, "CHECKPOINT") // best effort: see above
	return time.Since(start), autovacuum, nil
}
