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
