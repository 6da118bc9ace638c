package postgres

import (
	"context"
	"sync"
)

// txGate bounds the run transactions (BeginFinish) open at once to half
// of the pool's connections: each holds its connection while its job
// runs, and the node's own statements (a long run's start record, the
// heartbeat, claims, the finish batch) must still find one, or the runs
// would wait on a start record that waits on their connections. A run
// waits for a slot instead. An unbounded pool is not gated.
type txGate struct {
	mu   sync.Mutex
	open int
	free chan struct{} // closed when a slot frees; nil while nobody waits
}

// enter takes a slot of limit (limit <= 0: no bound), waiting while none
// is free, or until ctx ends.
func (g *txGate) enter(ctx context.Context, limit int) error {
	for {
		g.mu.Lock()
		if limit <= 0 || g.open < limit {
			g.open++
			g.mu.Unlock()
			return nil
		}
		if g.free == nil {
			g.free = make(chan struct{})
		}
		wait := g.free
		g.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// leave gives a slot back and wakes those waiting.
func (g *txGate) leave() {
	g.mu.Lock()
	g.open--
	if g.free != nil {
		close(g.free)
		g.free = nil
	}
	g.mu.Unlock()
}

// txLimit is how many run transactions the pool allows: half of its
// connections, at least one; 0 for an unbounded pool.
func txLimit(maxOpen int) int {
	if maxOpen <= 0 {
		return 0
	}
	return max(maxOpen/2, 1)
}
