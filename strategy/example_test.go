package strategy_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

func ExampleLookup() {
	s, err := strategy.Lookup(strategy.NameIDHash)
	if err != nil {
		panic(err)
	}
	live := []repository.Node{{ID: 1}, {ID: 2}, {ID: 3}} // sorted by id
	for id := repository.TaskID(1); id <= 4; id++ {
		for _, n := range live {
			if s.Accept(live, repository.Task{ID: id}, n.ID) {
				fmt.Printf("task %d -> node %d\n", id, n.ID)
			}
		}
	}

	_, err = strategy.Lookup("round_robin")
	fmt.Println(errors.Is(err, strategy.ErrUnknownStrategy), err)
	// Output:
	// task 1 -> node 2
	// task 2 -> node 3
	// task 3 -> node 1
	// task 4 -> node 2
	// true strategy: unknown strategy: "round_robin"
}

func ExampleRegister() {
	// Usually done in an init function. Only the oldest live node (the
	// first row) claims tasks.
	oldest := strategy.Func(func(live []repository.Node, _ repository.Task, self repository.NodeID) bool {
		return len(live) > 0 && live[0].ID == self
	})
	if err := strategy.Register("oldest_node", oldest); err != nil {
		fmt.Println(err)
	}

	s, _ := strategy.Lookup("oldest_node")
	live := []repository.Node{{ID: 4}, {ID: 9}}
	fmt.Println(s.Accept(live, repository.Task{ID: 1}, 4), s.Accept(live, repository.Task{ID: 1}, 9))

	// Built-ins cannot be replaced.
	fmt.Println(strategy.Register(strategy.NameIDHash, oldest))
	// Output:
	// true false
	// strategy: strategy already registered: "id_hash"
}

func ExampleAcceptOrSteal() {
	live := []repository.Node{{ID: 1}, {ID: 2}, {ID: 3}}
	task := repository.Task{ID: 3} // id_hash gives it to node 1
	const stealAfter = 2 * time.Second

	for _, overdue := range []time.Duration{0, 3 * time.Second} {
		for _, n := range live {
			ok := strategy.AcceptOrSteal(strategy.IDHash, live, task, n.ID, overdue, stealAfter)
			fmt.Printf("overdue %v node %d: %v\n", overdue, n.ID, ok)
		}
	}
	// A node that is not live never steals.
	fmt.Println(strategy.AcceptOrSteal(strategy.IDHash, live, task, 7, time.Hour, stealAfter))
	// Output:
	// overdue 0s node 1: true
	// overdue 0s node 2: false
	// overdue 0s node 3: false
	// overdue 3s node 1: true
	// overdue 3s node 2: true
	// overdue 3s node 3: true
	// false
}
