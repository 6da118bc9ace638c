package easyjob_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// Health tells a probe where a Scheduler is: before Run it is new and
// neither live nor ready.
func ExampleScheduler_Health() {
	s, err := easyjob.New(easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	h := s.Health()
	fmt.Println(h.State, h.Live, h.Ready)
	// Output: new false false
}

// runEnds receives the error of each run that ends (an observe.Observer).
type runEnds chan error

func (r runEnds) Observe(e observe.Event) {
	if e.Kind == observe.EventRunEnd {
		select {
		case r <- e.Err:
		default:
		}
	}
}

// A job that panics fails its run with a *PanicError, and the node goes
// on; an observer (or the history) sees it.
func ExamplePanicError() {
	ends := make(runEnds, 1)
	s, err := easyjob.New(easyjob.Config{Store: memory.New(), Observer: ends})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = s.Register("boom", "* * * * * *", func(ctx context.Context) error { panic("out of paper") })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	err = <-ends
	cancel()
	if runErr := <-done; runErr != nil {
		fmt.Println(runErr)
	}
	var pe *easyjob.PanicError
	fmt.Println(errors.As(err, &pe), pe.Value, len(pe.Stack) > 0)
	// Output: true out of paper true
}

// The misfire policies: what a fire found late does.
func ExampleMisfirePolicy() {
	for _, p := range []easyjob.MisfirePolicy{easyjob.FireOnceNow(), easyjob.Skip(), easyjob.CatchUp(3)} {
		fmt.Println(p)
	}
	// Output:
	// fire_once_now
	// skip
	// catch_up(3)
}
