package strategy_test

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

func TestDefault(t *testing.T) {
	tests := []struct {
		name string
		live []repository.Node
		task repository.TaskID
		self repository.NodeID
	}{
		{"live node", nodes(1, 2, 3), 5, 2},
		{"other live node", nodes(1, 2, 3), 5, 3},
		{"not live", nodes(1, 2, 3), 5, 9},
		{"no live set", nil, 0, 1},
		{"negative id", nodes(1), -4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strategy.Default.Accept(tt.live, task(tt.task), tt.self) {
				t.Fatal("Default rejected")
			}
		})
	}
}
