package strategy_test

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

func TestFuncAccept(t *testing.T) {
	var got repository.NodeID
	f := strategy.Func(func(_ []repository.Node, _ repository.Task, self repository.NodeID) bool {
		got = self
		return self == 7
	})
	var s strategy.Strategy = f
	if !s.Accept(nil, task(1), 7) || got != 7 {
		t.Fatalf("Accept(self=7) = false or self not passed (got %d)", got)
	}
	if s.Accept(nil, task(1), 8) {
		t.Fatal("Accept(self=8) = true")
	}
}

// TestSelfNotLive checks that every built-in but default rejects when self
// is not live, including with an empty live set.
func TestSelfNotLive(t *testing.T) {
	for _, live := range [][]repository.Node{nil, nodes(1, 2, 3)} {
		for id := repository.TaskID(-3); id < 10; id++ {
			for _, name := range []string{strategy.NameIDHash, strategy.NameLeastCount, strategy.NameWeight} {
				s, err := strategy.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				if s.Accept(live, task(id), 99) {
					t.Errorf("%s: accepted task %d for non-live node with live %v", name, id, live)
				}
			}
			if !strategy.Default.Accept(live, task(id), 99) {
				t.Errorf("default: rejected task %d for non-live node", id)
			}
		}
	}
}
