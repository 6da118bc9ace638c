package strategy_test

import (
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

func TestAcceptOrSteal(t *testing.T) {
	live := nodes(1, 2, 3)
	const steal = 2 * time.Second
	tests := []struct {
		name       string
		s          strategy.Strategy
		self       repository.NodeID
		overdue    time.Duration
		stealAfter time.Duration
		want       bool
	}{
		// Task 0 belongs to node 1 under id_hash.
		{"strategy accepts, not overdue", strategy.IDHash, 1, 0, steal, true},
		{"strategy rejects, not overdue", strategy.IDHash, 2, 0, steal, false},
		{"strategy rejects, just under threshold", strategy.IDHash, 2, steal - 1, steal, false},
		{"strategy rejects, at threshold: steal", strategy.IDHash, 2, steal, steal, true},
		{"strategy rejects, past threshold: steal", strategy.IDHash, 3, time.Hour, steal, true},
		{"not live never steals", strategy.IDHash, 9, time.Hour, steal, false},
		{"stealing disabled by zero threshold", strategy.IDHash, 2, time.Hour, 0, false},
		{"stealing disabled by negative threshold", strategy.IDHash, 2, time.Hour, -1, false},
		{"custom strategy that never accepts, overdue", strategy.Func(never), 2, steal, steal, true},
		{"custom strategy that never accepts, not overdue", strategy.Func(never), 2, 0, steal, false},
		{"nil strategy means default", nil, 9, 0, steal, true},
		{"default accepts even when not live", strategy.Default, 9, 0, steal, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strategy.AcceptOrSteal(tt.s, live, task(0), tt.self, tt.overdue, tt.stealAfter)
			if got != tt.want {
				t.Fatalf("AcceptOrSteal(self %d, overdue %v, stealAfter %v) = %v, want %v",
					tt.self, tt.overdue, tt.stealAfter, got, tt.want)
			}
		})
	}
}
