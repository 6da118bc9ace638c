package easyjob

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

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
			job := func(context.Context) error { started.Done(); return nil }
			specs := make(map[string]*taskSpec, burst)
			ordered := make([]*taskSpec, burst)
			for i := range ordered {
				s := newTaskSpec(fmt.Sprintf("t%05d", i), "* * * * * *", job, nil)
				if s.err != nil {
					b.Fatal(s.err)
				}
				specs[s.name], ordered[i] = s, s
			}
			n, err := newNode(Config{Store: memory.New(), Group: "bench"}.withDefaults(), memory.New(), specs)
			if err != nil {
				b.Fatal(err)
			}
			ctx := b.Context()
			n.bg = ctx
			n.pool = newPool(context.WithoutCancel(ctx), n.cfg.Workers, n.execute) // as run makes it
			defer func() { n.pool.close(); n.pool.waitWorkers() }()
			due := make([]*claim, burst)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				at := time.Now()
				for k, s := range ordered {
					t := repository.Task{
						ID: repository.TaskID(k + 1), Name: s.name, Cron: s.cron, Status: repository.TaskDoing,
						Version: int64(i + 1), NodeID: 1, NextStartTime: at, Attempt: 1,
					}
					due[k] = newClaim(t, s, at, n.claims.currentEpoch())
					n.claims.add(due[k])
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
						n.pool.finished()
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

// BenchmarkPoolBurst times a burst through the pool: burst claims
// submitted at once to a pool of workers slots, each job an empty
// function that leaves its slot to its worker, as execute does. It
// reports the cost
// per fire of the hand-offs between the boss, the slots and the worker
// goroutines, which bounds how fast a node starts a second's fires.
func BenchmarkPoolBurst(b *testing.B) {
	for _, size := range []int{10, 100} {
		b.Run(fmt.Sprintf("workers=%d", size), func(b *testing.B) {
			const burst = 1000
			var wg sync.WaitGroup
			p := newPool(context.Background(), size, func(context.Context, *claim) { wg.Done() })
			defer func() { p.close(); p.waitWorkers() }()
			claims := make([]*claim, burst)
			for i := range claims {
				claims[i] = newClaim(repository.Task{ID: repository.TaskID(i + 1)}, nil, time.Time{}, 0)
			}
			b.ResetTimer()
			for range b.N {
				wg.Add(burst)
				p.submit(time.Now(), claims...) // as the boss fires a burst
				wg.Wait()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*burst), "ns/fire")
		})
	}
}
