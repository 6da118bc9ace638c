package easyjob_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// runNode runs one node with a yearly "report" task on store until the
// returned stop is called. In production the node is another process and
// the Client shares only the database (Config.DSN) with it.
func runNode(store repository.Store, job easyjob.Func) (stop func()) {
	s, err := easyjob.New(easyjob.Config{Store: store, PollInterval: 100 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	if err := s.Register("report", "0 0 0 1 1 *", job); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	c, _ := easyjob.NewClient(ctx, easyjob.Config{Store: store})
	defer c.Close()
	for { // until the node has registered its task and itself
		_, err := c.Task(ctx, "report")
		if nodes, _ := c.Nodes(ctx); err == nil && len(nodes) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Println("run:", err)
		}
	}
}

// Trigger runs a task now, out of its schedule; History shows the run.
func ExampleClient_Trigger() {
	store := memory.New()
	ran := make(chan struct{}, 1)
	stop := runNode(store, func(ctx context.Context) error {
		ran <- struct{}{}
		return nil
	})
	defer stop()

	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	if _, err := c.Trigger(ctx, "report"); err != nil {
		fmt.Println(err)
		return
	}
	<-ran
	for { // the run is recorded when it finishes
		runs, err := c.History(ctx, "report", easyjob.HistoryFilter{Limit: 10})
		if err != nil {
			fmt.Println(err)
			return
		}
		if len(runs) == 1 && runs[0].Status != "running" {
			fmt.Println(runs[0].Task, runs[0].Status, runs[0].Kind)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	_, err = c.Trigger(ctx, "no-such-task")
	fmt.Println(errors.Is(err, easyjob.ErrTaskNotFound))
	// Output:
	// report succeeded manual
	// true
}

// Every action of a Client is recorded in the audit log under the actor
// its context names (WithActor; without one, the process's OS user).
func ExampleClient_Audit() {
	store := memory.New()
	stop := runNode(store, func(ctx context.Context) error { return nil })
	defer stop()

	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	alice := easyjob.WithActor(ctx, easyjob.Actor{Name: "alice", Via: "ops-bot", From: "10.0.0.7"})
	if _, err := c.Pause(alice, "report"); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := c.Reschedule(alice, "report", "0 0 6 * * *"); err != nil {
		fmt.Println(err)
		return
	}
	entries, err := c.Audit(ctx, easyjob.AuditFilter{Task: "report"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range entries { // newest first
		fmt.Println(e.Name, e.Via, e.From, e.Action, e.Task, e.Detail)
	}
	// Output:
	// alice ops-bot 10.0.0.7 reschedule report cron "0 0 0 1 1 *" -> "0 0 6 * * *"
	// alice ops-bot 10.0.0.7 pause report
}

// Pause stops a task's fires until Resume; a fire already running
// completes first.
func ExampleClient_Pause() {
	store := memory.New()
	stop := runNode(store, func(ctx context.Context) error { return nil })
	defer stop()

	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	t, err := c.Pause(ctx, "report")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Name, t.Status)
	t, err = c.Resume(ctx, "report")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Name, t.Status)
	// Output:
	// report paused
	// report pending
}

// Reschedule changes a task's cron at run time; the next fire comes from
// the new expression. An invalid expression is refused.
func ExampleClient_Reschedule() {
	store := memory.New()
	stop := runNode(store, func(ctx context.Context) error { return nil })
	defer stop()

	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	t, err := c.Reschedule(ctx, "report", "0 30 6 * * *") // 06:30:00 every day
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Cron, t.NextStartTime.Format("15:04:05"))

	_, err = c.Reschedule(ctx, "report", "every tuesday")
	fmt.Println(errors.Is(err, easyjob.ErrInvalidCron))
	// Output:
	// 0 30 6 * * * 06:30:00
	// true
}

// Nodes shows the nodes of the group as the database clock judges them.
func ExampleClient_Nodes() {
	store := memory.New()
	stop := runNode(store, func(ctx context.Context) error { return nil })
	defer stop()

	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	nodes, err := c.Nodes(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range nodes {
		fmt.Println("live:", n.Live, "row:", n.RowNumber, "dead:", n.Dead)
	}
	// Output:
	// live: true row: 1 dead: false
}
