package strategy_test

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

func withWeights(weights ...int) []repository.Node {
	live := make([]repository.Node, len(weights))
	for i, w := range weights {
		live[i] = repository.Node{ID: repository.NodeID(10 * (i + 1)), Weight: w}
	}
	return live
}

func TestWeight(t *testing.T) {
	live := withWeights(1, 2, 3) // bands: node 10 [0,1), 20 [1,3), 30 [3,6)
	tests := []struct {
		name string
		live []repository.Node
		task repository.TaskID
		self repository.NodeID
		want bool
	}{
		{"0 in band of 10", live, 0, 10, true},
		{"0 not in band of 20", live, 0, 20, false},
		{"1 in band of 20", live, 1, 20, true},
		{"2 in band of 20", live, 2, 20, true},
		{"3 not in band of 20", live, 3, 20, false},
		{"3 in band of 30", live, 3, 30, true},
		{"5 in band of 30", live, 5, 30, true},
		{"6 wraps to band of 10", live, 6, 10, true},
		{"-1 wraps to 5, band of 30", live, -1, 30, true},
		{"weight 0 counts as 1", withWeights(0, 1), 0, 10, true},
		{"weight 0 counts as 1, other band", withWeights(0, 1), 1, 20, true},
		{"negative weight counts as 1", withWeights(-5, 1), 1, 10, false},
		{"self not live", live, 0, 11, false},
		{"empty live set", nil, 0, 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strategy.Weight.Accept(tt.live, task(tt.task), tt.self); got != tt.want {
				t.Fatalf("Weight.Accept(task %d, self %d) = %v, want %v", tt.task, tt.self, got, tt.want)
			}
		})
	}
}

func TestWeightProportionalSplit(t *testing.T) {
	live := withWeights(1, 2, 3)
	got := map[repository.NodeID]int{}
	for id := repository.TaskID(1); id <= 600; id++ {
		for _, n := range live {
			if strategy.Weight.Accept(live, task(id), n.ID) {
				got[n.ID]++
			}
		}
	}
	want := map[repository.NodeID]int{10: 100, 20: 200, 30: 300}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("node %d accepted %d of 600 tasks, want %d (all: %v)", id, got[id], w, got)
		}
	}
}
