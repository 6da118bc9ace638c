package strategy_test

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

func TestIDHash(t *testing.T) {
	live := nodes(10, 20, 30) // row numbers 1, 2, 3
	tests := []struct {
		name string
		live []repository.Node
		task repository.TaskID
		self repository.NodeID
		want bool
	}{
		{"0%3+1=1 row 1", live, 0, 10, true},
		{"0%3+1=1 not row 2", live, 0, 20, false},
		{"4%3+1=2 row 2", live, 4, 20, true},
		{"4%3+1=2 not row 3", live, 4, 30, false},
		{"5%3+1=3 row 3", live, 5, 30, true},
		{"5%3+1=3 not row 1", live, 5, 10, false},
		{"single node takes all", nodes(7), 12345, 7, true},
		{"negative id wraps: -1 -> row 3", live, -1, 30, true},
		{"negative id wraps: -1 not row 1", live, -1, 10, false},
		{"self not live", live, 0, 11, false},
		{"empty live set", nil, 0, 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strategy.IDHash.Accept(tt.live, task(tt.task), tt.self); got != tt.want {
				t.Fatalf("IDHash.Accept(task %d, self %d) = %v, want %v", tt.task, tt.self, got, tt.want)
			}
		})
	}
}

func TestIDHashEvenSplit(t *testing.T) {
	live := nodes(3, 8, 21)
	got := map[repository.NodeID]int{}
	for id := repository.TaskID(1); id <= 300; id++ {
		for _, n := range live {
			if strategy.IDHash.Accept(live, task(id), n.ID) {
				got[n.ID]++
			}
		}
	}
	for _, n := range live {
		if got[n.ID] != 100 {
			t.Errorf("node %d accepted %d of 300 tasks, want 100 (all: %v)", n.ID, got[n.ID], got)
		}
	}
}
