package easyjob_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// A merge that runs after both loads of the same fire, with what each
// loaded. On several replicas the loads run in parallel on whichever
// nodes claim them; the last to finish makes the merge due.
func ExampleParents() {
	s, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	load := func(rows int) easyjob.Func {
		return func(ctx context.Context) error { return easyjob.SetResult(ctx, rows) }
	}
	merged := make(chan string, 1)
	_ = s.Register("start", "* * * * * *", func(context.Context) error { return nil })
	_ = s.Register("load-a", "", load(3), easyjob.Parents("start"))
	_ = s.Register("load-b", "", load(4), easyjob.Parents("start"))
	_ = s.Register("merge", "", func(ctx context.Context) error {
		in, err := easyjob.ParentResults(ctx)
		if err != nil {
			return err
		}
		select {
		case merged <- fmt.Sprintf("load-a=%s load-b=%s", in["load-a"], in["load-b"]):
		default:
		}
		return nil
	}, easyjob.Parents("load-a", "load-b"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	fmt.Println(<-merged)
	cancel()
	fmt.Println(<-done)

	s2, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	_ = s2.Register("x", "", func(context.Context) error { return nil }, easyjob.Parents("y"))
	_ = s2.Register("y", "", func(context.Context) error { return nil }, easyjob.Parents("x"))
	fmt.Println(errors.Is(s2.Run(context.Background()), easyjob.ErrCycle))
	// Output:
	// load-a=3 load-b=4
	// <nil>
	// true
}

// A re-index split in 4 shards that the live nodes share; each shard
// works on its part of the keys.
func ExampleShards() {
	s, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	var mu sync.Mutex
	seen := map[int]bool{}
	all := make(chan []int, 1)
	_ = s.Register("reindex", "* * * * * *", func(ctx context.Context) error {
		info, _ := easyjob.InfoFromContext(ctx)
		mu.Lock()
		defer mu.Unlock()
		seen[info.Shard] = true
		if len(seen) == info.Shards {
			var got []int
			for k := range seen {
				got = append(got, k)
			}
			sort.Ints(got)
			select {
			case all <- got:
			default:
			}
		}
		return nil
	}, easyjob.Shards(4))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	fmt.Println("shards run:", <-all)
	cancel()
	fmt.Println(<-done)
	// Output:
	// shards run: [0 1 2 3]
	// <nil>
}

// A report sent whether or not its inputs loaded: it notes the failures.
func ExampleEvenIfParentsFail() {
	s, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	_ = s.Register("load", "0 0 6 * * *", func(context.Context) error { return nil })
	err := s.Register("report", "", func(context.Context) error { return nil },
		easyjob.Parents("load"), easyjob.EvenIfParentsFail())
	fmt.Println(err)
	// Output: <nil>
}

// SetResult outside a run, or in a task no step follows, keeps nothing.
func ExampleSetResult() {
	fmt.Println(easyjob.SetResult(context.Background(), map[string]int{"rows": 1}))
	fmt.Println(easyjob.SetResult(context.Background(), func() {}) == nil) // nothing is encoded: no step to hand it to
	in, err := easyjob.ParentResults(context.Background())
	fmt.Println(len(in), err)
	// Output:
	// <nil>
	// true
	// 0 <nil>
}
