package dispatch

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/repository"
)

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
			p := NewPool(context.Background(), size, func(context.Context, *claim.Claim) { wg.Done() })
			defer func() { p.Close(); p.WaitWorkers() }()
			claims := make([]*claim.Claim, burst)
			for i := range claims {
				claims[i] = claim.New(repository.Task{ID: repository.TaskID(i + 1)}, testSpec, time.Time{}, 0)
			}
			b.ResetTimer()
			for range b.N {
				wg.Add(burst)
				p.Submit(time.Now(), claims...) // as the boss fires a burst
				wg.Wait()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*burst), "ns/fire")
		})
	}
}
