package strategy_test

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

func benchLive() []repository.Node {
	live := make([]repository.Node, 10)
	for i := range live {
		live[i] = repository.Node{
			ID:     repository.NodeID(i + 1),
			Weight: 1 + i%3,
			Counts: int64(100 + i%4),
		}
	}
	return live
}

func benchmarkAccept(b *testing.B, s strategy.Strategy) {
	live := benchLive()
	self := live[7].ID
	var n int
	id := repository.TaskID(0)
	for b.Loop() {
		if s.Accept(live, task(id), self) {
			n++
		}
		id++
	}
	_ = n
}

func BenchmarkAccept(b *testing.B) {
	for _, name := range []string{strategy.NameDefault, strategy.NameIDHash, strategy.NameLeastCount, strategy.NameWeight} {
		s, err := strategy.Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) { benchmarkAccept(b, s) })
	}
	b.Run("steal_id_hash", func(b *testing.B) {
		live := benchLive()
		id := repository.TaskID(0)
		for b.Loop() {
			strategy.AcceptOrSteal(strategy.IDHash, live, task(id), live[7].ID, 0, 1)
			id++
		}
	})
}
