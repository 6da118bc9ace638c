package easyjob_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// ReportArgs are the arguments of the "report" handler below.
type ReportArgs struct {
	Customer string `json:"customer"`
	Days     int    `json:"days"`
}

// A handler is code registered by kind; the schedules that run it, each
// with its own cron and arguments, are created at runtime (Client.Create)
// from any process that shares the database, and a trigger may give one
// run arguments of its own (WithArgs).
func ExampleHandle() {
	store := memory.New()
	s, err := easyjob.New(easyjob.Config{Store: store, PollInterval: 100 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan ReportArgs, 1)
	err = s.Handle("report", easyjob.HandlerOf(func(ctx context.Context, a ReportArgs) error {
		select {
		case done <- a:
		default:
		}
		return nil
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()

	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for { // until the node is live with its handler
		if nodes, _ := c.Nodes(ctx); len(nodes) > 0 && nodes[0].Live {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, err = c.Create(ctx, easyjob.Schedule{
		Name: "report-acme", Handler: "report", Cron: "* * * * * *",
		Args: ReportArgs{Customer: "acme", Days: 7},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", <-done)

	// Arguments the handler's type refuses are refused before anything is written.
	_, err = c.Create(ctx, easyjob.Schedule{
		Name: "report-bad", Handler: "report", Cron: "* * * * * *",
		Args: json.RawMessage(`{"customer": "acme", "days": "seven"}`),
	})
	fmt.Println(errors.Is(err, easyjob.ErrInvalidArgs))

	// A trigger may carry arguments of its own for that one run (WithArgs);
	// History records each run's arguments and why it ran (Kind).
	if _, err := c.Trigger(ctx, "report-acme", easyjob.WithArgs(ReportArgs{Customer: "acme", Days: 90})); err != nil {
		fmt.Println(err)
		return
	}
	for manual := false; !manual; time.Sleep(10 * time.Millisecond) {
		runs, err := c.History(ctx, "report-acme", easyjob.HistoryFilter{})
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range runs {
			if r.Kind == easyjob.RunManual && !r.FinishedAt.IsZero() {
				fmt.Println(r.Kind, string(r.Args))
				manual = true
			}
		}
	}
	cancel()
	if err := <-ran; err != nil {
		fmt.Println("run:", err)
	}
	// Output:
	// {Customer:acme Days:7}
	// true
	// manual {"customer":"acme","days":90}
}

// ListTasks reads a group a page at a time, by name: each page starts
// after the last name of the one before (Next), so the thousandth page of
// a million schedules costs what the first does.
func ExampleClient_ListTasks() {
	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for _, name := range []string{"invoice-acme", "invoice-globex", "invoice-initech", "report-acme"} {
		_, err := c.Create(ctx, easyjob.Schedule{Name: name, Handler: "mail", Cron: "0 0 8 * * *"}, easyjob.AllowUnknownHandler())
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	q := easyjob.TaskQuery{Search: "invoice", Limit: 2}
	for {
		page, err := c.ListTasks(ctx, q)
		if err != nil {
			fmt.Println(err)
			return
		}
		var names []string
		for _, t := range page.Tasks {
			names = append(names, t.Name)
		}
		fmt.Printf("%v of %d\n", names, page.Total)
		if page.Next == "" {
			break
		}
		q.After = page.Next
	}
	// Output:
	// [invoice-acme invoice-globex] of 3
	// [invoice-initech] of 3
}

// A window bounds a task's fires; Explain lists those to come.
func ExampleWindow() {
	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	start := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	_, err = c.Create(ctx, easyjob.Schedule{Name: "launch-week", Handler: "mail", Cron: "0 0 9 * * *",
		Options: []easyjob.Option{easyjob.Window(start, start.Add(72*time.Hour))}}, easyjob.AllowUnknownHandler())
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := c.Explain(ctx, "launch-week", time.Time{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x.Blocked)
	for _, f := range x.Next {
		fmt.Println(f.Format(time.DateTime))
	}
	// Output:
	// waiting: no live node has its handler "mail"; the fires below come once one has
	// 2030-01-01 09:00:00
	// 2030-01-02 09:00:00
	// 2030-01-03 09:00:00
	// 2030-01-04 09:00:00
}

// An exclusion calendar is shared data: tasks that name it skip the fires
// it excludes (each recorded skipped, naming it).
func ExampleCalendar() {
	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, err = c.SetCalendar(ctx, easyjob.ExclusionCalendar{Name: "closed", Crons: []string{"* * * * 0,6"}, Dates: []string{"2030-01-08"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fri := time.Date(2030, 1, 4, 0, 0, 0, 0, time.UTC)
	_, err = c.Create(ctx, easyjob.Schedule{Name: "standup", Handler: "notify", Cron: "0 0 9 * * *",
		Options: []easyjob.Option{easyjob.Calendar("closed"), easyjob.Window(fri, fri.Add(6*24*time.Hour))}},
		easyjob.AllowUnknownHandler())
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := c.Explain(ctx, "standup", time.Time{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range x.Next {
		fmt.Println(f.Format("Mon 2006-01-02 15:04"))
	}
	// Output:
	// Fri 2030-01-04 09:00
	// Mon 2030-01-07 09:00
	// Wed 2030-01-09 09:00
}
