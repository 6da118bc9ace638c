package harness

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// inProcRunner runs the nodes as schedulers in this process, each on its
// own counting store, all recording in one memory ledger. Their CPU and
// memory are the whole process's.
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

// startInProcRunner starts o.nodes schedulers with p.
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
		if p.Metrics {
			if err := withMetrics(runCtx, &r.wg, &cfg); err != nil {
				_ = pg.Close()
				r.stop()
				return nil, err
			}
		}
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
			CPUSeconds: r.cpu, PeakRSSBytes: r.peakRSS,
		}
		for _, f := range fires {
			if slices.Contains(st.NodeIDs, f.Node) {
				nodes[i].Fires++
			}
		}
	}
	return fires, nodes
}
