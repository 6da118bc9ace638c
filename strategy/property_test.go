package strategy_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

// randomLive returns 1..maxNodes live nodes with unique ids sorted
// ascending, random weights (some below 1) and random counts drawn from a
// small range so that ties are common.
func randomLive(r *rand.Rand, maxNodes int) []repository.Node {
	n := 1 + r.IntN(maxNodes)
	seen := map[repository.NodeID]bool{}
	live := make([]repository.Node, 0, n)
	for len(live) < n {
		id := repository.NodeID(1 + r.Int64N(1000))
		if seen[id] {
			continue
		}
		seen[id] = true
		live = append(live, repository.Node{
			ID:     id,
			Weight: r.IntN(8) - 1, // -1..6; below 1 counts as 1
			Counts: r.Int64N(4),
		})
	}
	slices.SortFunc(live, func(a, b repository.Node) int { return int(a.ID - b.ID) })
	return live
}

func randomTaskID(r *rand.Rand) repository.TaskID {
	switch r.IntN(4) {
	case 0:
		return repository.TaskID(r.Int64()) // large
	case 1:
		return repository.TaskID(-r.Int64N(1 << 20)) // negative
	default:
		return repository.TaskID(r.Int64N(10000))
	}
}

// TestExactlyOneAcceptor checks, over many random live sets and task ids,
// that each partitioning strategy accepts every task on exactly one live
// node and on no node outside the live set.
func TestExactlyOneAcceptor(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	strategies := map[string]strategy.Strategy{
		strategy.NameIDHash:     strategy.IDHash,
		strategy.NameLeastCount: strategy.LeastCount,
		strategy.NameWeight:     strategy.Weight,
	}
	for range 500 {
		live := randomLive(r, 12)
		ids := []repository.TaskID{0, 1, -1, math.MaxInt64, math.MinInt64}
		for range 200 {
			ids = append(ids, randomTaskID(r))
		}
		for name, s := range strategies {
			for _, id := range ids {
				accepted := 0
				for _, n := range live {
					if s.Accept(live, task(id), n.ID) {
						accepted++
					}
				}
				if accepted != 1 {
					t.Fatalf("%s: task %d accepted on %d nodes, want 1; live %+v", name, id, accepted, live)
				}
				if s.Accept(live, task(id), 0) || s.Accept(live, task(id), 1001) {
					t.Fatalf("%s: task %d accepted on a node that is not live", name, id)
				}
			}
		}
	}
}

// TestWeightShareProperty checks that over Σweight consecutive task ids,
// from any start, each node accepts exactly its weight's worth.
func TestWeightShareProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		live := randomLive(r, 8)
		total := 0
		for _, n := range live {
			total += max(n.Weight, 1)
		}
		start := randomTaskID(r)
		for _, n := range live {
			got := 0
			for k := range total {
				if strategy.Weight.Accept(live, task(start+repository.TaskID(k)), n.ID) {
					got++
				}
			}
			if want := max(n.Weight, 1); got != want {
				t.Fatalf("node %d (weight %d) accepted %d of %d tasks from %d, want %d; live %+v",
					n.ID, n.Weight, got, total, start, want, live)
			}
		}
	}
}
