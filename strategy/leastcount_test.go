package strategy_test

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

func withCounts(counts ...int64) []repository.Node {
	live := make([]repository.Node, len(counts))
	for i, c := range counts {
		live[i] = repository.Node{ID: repository.NodeID(i + 1), Weight: 1, Counts: c}
	}
	return live
}

func TestLeastCount(t *testing.T) {
	tests := []struct {
		name string
		live []repository.Node
		task repository.TaskID
		self repository.NodeID
		want bool
	}{
		// Average 68: only node 2 is at or below it.
		{"unique least takes task", withCounts(90, 20, 95), 0, 2, true},
		{"unique least takes any id", withCounts(90, 20, 95), 7, 2, true},
		{"more counts rejects", withCounts(90, 20, 95), 7, 1, false},
		{"most counts rejects", withCounts(90, 20, 95), 7, 3, false},
		// Average 20: nodes 1 and 2 share by id_hash, node 3 gets nothing.
		{"below average share row 1", withCounts(10, 10, 40), 0, 1, true},
		{"below average share row 2", withCounts(10, 10, 40), 1, 2, true},
		{"above average rejects", withCounts(10, 10, 40), 2, 3, false},
		// Within 5 % of the least (100): all three tie.
		{"within 5 percent ties", withCounts(100, 104, 105), 2, 3, true},
		{"within 5 percent ties reject", withCounts(100, 104, 105), 2, 1, false},
		// Nodes 1 and 3 tie at 2: tied rows are node 1 -> 1, node 3 -> 2.
		{"tie 0%2+1=1 tied row 1", withCounts(2, 4, 2), 0, 1, true},
		{"tie 0%2+1=1 not tied row 2", withCounts(2, 4, 2), 0, 3, false},
		{"tie 1%2+1=2 tied row 2", withCounts(2, 4, 2), 1, 3, true},
		{"tie 1%2+1=2 not tied row 1", withCounts(2, 4, 2), 1, 1, false},
		{"tie never goes to untied", withCounts(2, 4, 2), 1, 2, false},
		{"all tied acts like id_hash", withCounts(0, 0, 0), 5, 3, true},
		{"all tied acts like id_hash reject", withCounts(0, 0, 0), 5, 1, false},
		{"negative id wraps in tie", withCounts(1, 1), -1, 2, true},
		{"self not live", withCounts(0, 1), 0, 9, false},
		{"empty live set", nil, 0, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strategy.LeastCount.Accept(tt.live, task(tt.task), tt.self); got != tt.want {
				t.Fatalf("LeastCount.Accept(task %d, self %d) = %v, want %v", tt.task, tt.self, got, tt.want)
			}
		})
	}
}

// Keep: within 5 % of the fair share a node keeps everything; above it,
// it keeps about bound/own of its tasks, always the same ones.
func TestLeastCountKeep(t *testing.T) {
	keeps := func(live []repository.Node, self repository.NodeID) (kept int, which map[repository.TaskID]bool) {
		which = map[repository.TaskID]bool{}
		for id := repository.TaskID(1); id <= 3000; id++ {
			if strategy.Keeps(strategy.LeastCount, live, task(id), self) {
				kept++
				which[id] = true
			}
		}
		return kept, which
	}
	if kept, _ := keeps(withCounts(1040, 1000, 960), 1); kept != 3000 {
		t.Fatalf("4 %% over the fair share: kept %d of 3000, want all", kept)
	}
	// Node 1 has twice the fair share (6000 of 9000 over 3 nodes: fair
	// 3000, bound 3151): it keeps about 3151/6000 = 53 % of its tasks.
	kept, first := keeps(withCounts(6000, 2000, 1000), 1)
	if kept < 1450 || kept > 1750 {
		t.Fatalf("at twice the fair share: kept %d of 3000, want about 1575", kept)
	}
	_, again := keeps(withCounts(6000, 2000, 1000), 1)
	for id := range first {
		if !again[id] {
			t.Fatalf("task %d kept once and shed the next time with the same counts", id)
		}
	}
	if kept, _ := keeps(withCounts(6000, 2000, 1000), 9); kept != 0 {
		t.Fatalf("a node not live kept %d tasks", kept)
	}
	// Strategies that are no Keeper keep what they accept.
	live := withCounts(0, 0, 0)
	for id := repository.TaskID(1); id <= 30; id++ {
		if strategy.Keeps(strategy.IDHash, live, task(id), 2) != strategy.IDHash.Accept(live, task(id), 2) {
			t.Fatalf("Keeps(IDHash) differs from Accept for task %d", id)
		}
	}
}
