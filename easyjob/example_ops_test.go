package easyjob_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// A job logs through its context's logger; the lines are kept with its
// run, and Client.RunLog (easyjob logs, the dashboard's run page) reads
// them back.
func ExampleLogger() {
	store := memory.New()
	s, _ := easyjob.New(easyjob.Config{Store: store})
	ran := make(chan int64, 1)
	_ = s.Register("report", "* * * * * *", func(ctx context.Context) error {
		easyjob.Logger(ctx).Info("loaded", "rows", 42)
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	c, _ := easyjob.NewClient(ctx, easyjob.Config{Store: store})
	defer c.Close()
	go func() {
		for ctx.Err() == nil { // poll until the first run is recorded
			if xs, err := c.History(ctx, "report", easyjob.HistoryFilter{Status: "succeeded", Limit: 1}); err == nil && len(xs) == 1 {
				ran <- xs[0].ID
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	l, err := c.RunLog(ctx, "report", <-ran)
	cancel()
	if rerr := <-done; rerr != nil {
		fmt.Println("run:", rerr)
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	// The line's time varies: print from its level on.
	_, rest, _ := strings.Cut(strings.TrimSpace(l.Log), " ")
	fmt.Println(rest)
	// Output: level=INFO msg=loaded rows=42
}

// A daemon runs all the time on one node of the group; it is registered
// with an empty cron, and started again when it returns.
func ExampleDaemon() {
	s, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	started := make(chan struct{}, 1)
	err := s.Register("consumer", "", func(ctx context.Context) error {
		select {
		case started <- struct{}{}:
		default:
		}
		<-ctx.Done() // consume until the node stops or loses the task
		return nil
	}, easyjob.Daemon())
	fmt.Println(err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	<-started
	cancel() // a stopping node cancels its daemon at once: a peer takes it over
	fmt.Println("Run returned", <-done)

	s2, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	err = s2.Register("bad", "* * * * * *", func(context.Context) error { return nil }, easyjob.Daemon())
	fmt.Println(errors.Is(err, easyjob.ErrInvalidCron))
	// Output:
	// <nil>
	// Run returned <nil>
	// true
}

// A broadcast task runs each fire on every live node that registers it.
func ExampleBroadcast() {
	s, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	err := s.Register("flush-local-cache", "0 */5 * * * *", func(context.Context) error { return nil }, easyjob.Broadcast())
	fmt.Println(err)
	err = s.Register("bad", "0 */5 * * * *", func(context.Context) error { return nil }, easyjob.Broadcast(), easyjob.Retry(3, time.Second))
	if err == nil {
		err = s.Run(context.Background())
	}
	fmt.Println(errors.Is(err, easyjob.ErrInvalidOption))
	// Output:
	// <nil>
	// true
}
