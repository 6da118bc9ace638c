package node

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/dispatch"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// BenchmarkNodeBurst times what a node does in the first milliseconds of
// a second whose fires all fall due at once: burst claims go through the
// boss's dispatch (claim set, pool) to the workers, execute and the job,
// whose first instruction counts the fire started, and each finish is
// handed to the completer (not written: the completer does not run). It
// reports ns per fire from dispatch to the last job's start, the cost
// that sets how late a second's last fire starts (issue 11: p99 start
// lag at 3 × 5 000 every-second tasks). The memory store is never called
// on this path.
func BenchmarkNodeBurst(b *testing.B) {
	for _, burst := range []int{1667, 5000} {
		b.Run(fmt.Sprintf("claims=%d", burst), func(b *testing.B) {
			var started sync.WaitGroup
			// As the public API's adapter does: the run's metadata in the
			// job's context, one allocation per fire.
			job := func(ctx context.Context, r spec.Run) error {
				benchSink.Store(&benchRunCtx{Context: ctx, run: r})
				started.Done()
				return nil
			}
			specs := make(map[string]*spec.Spec, burst)
			ordered := make([]*spec.Spec, burst)
			for i := range ordered {
				sched, err := schedule.Parse("* * * * * *", "")
				if err != nil {
					b.Fatal(err)
				}
				s := &spec.Spec{Name: fmt.Sprintf("t%05d", i), Cron: "* * * * * *", Job: job, Sched: sched,
					Opts: repository.TaskOptions{Misfire: repository.MisfireFireOnceNow, MisfireThreshold: schedule.DefaultMisfireThreshold}}
				specs[s.Name], ordered[i] = s, s
			}
			n, err := New(benchConfig(), memory.New(), specs)
			if err != nil {
				b.Fatal(err)
			}
			ctx := b.Context()
			n.bg = ctx
			n.pool = dispatch.NewPool(context.WithoutCancel(ctx), n.cfg.Workers, n.run) // as Run makes it
			defer func() { n.pool.Close(); n.pool.WaitWorkers() }()
			due := make([]*claim.Claim, burst)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				at := time.Now()
				for k, s := range ordered {
					t := repository.Task{
						ID: repository.TaskID(k + 1), Name: s.Name, Cron: s.Cron, Status: repository.TaskDoing,
						Version: int64(i + 1), NodeID: 1, NextStartTime: at, Attempt: 1,
					}
					due[k] = claim.New(t, s, at, n.claims.Epoch())
					n.claims.Keep(due[k])
				}
				started.Add(burst)
				b.StartTimer()
				n.dispatch(at, due)
				started.Wait()
				b.StopTimer()
				// Every finish handed over: take them, as a statement would.
				for taken := 0; taken < burst; {
					got := n.completer.take(burst)
					for range got {
						n.pool.Finished()
					}
					taken += len(got)
					if len(got) == 0 {
						time.Sleep(100 * time.Microsecond) // workers still between the job and the hand-over
					}
				}
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*burst), "ns/fire")
		})
	}
}

// benchRunCtx is what the public adapter allocates per fire: the job's
// context carrying its run (easyjob's infoCtx).
type benchRunCtx struct {
	context.Context
	run spec.Run
}

// benchSink keeps the context from being optimised away.
var benchSink atomic.Pointer[benchRunCtx]

// benchConfig is the node configuration of the defaults (easyjob.Config's).
func benchConfig() Config {
	return Config{
		Group: "bench", NodeName: "bench", Strategy: "default", Weight: 1,
		HeartbeatInterval: time.Second, LiveAfter: 2 * time.Second, DeadAfter: 3 * time.Second,
		RecoverInterval: time.Second, PollInterval: time.Second, FetchWindow: 5 * time.Second,
		StealAfter: 2 * time.Second, Workers: 10, MaxClaims: 10000,
		StartDeadline: time.Second, ShutdownGrace: 30 * time.Second, NodeExpiry: time.Hour,
		Logger: zerolog.Nop(),
	}
}
