package easyjob_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// CreateMany writes a batch in one statement, all or nothing: a batch
// with one bad schedule writes none of them and names the bad one.
func ExampleClient_CreateMany() {
	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	var batch []easyjob.Schedule
	for _, customer := range []string{"acme", "globex", "initech"} {
		batch = append(batch, easyjob.Schedule{
			Name: "report-" + customer, Handler: "report", Cron: "0 0 8 * * *",
			Args: ReportArgs{Customer: customer, Days: 7},
		})
	}
	infos, err := c.CreateMany(ctx, batch, easyjob.AllowUnknownHandler())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range infos {
		fmt.Println(t.Name, t.Handler, string(t.Args))
	}

	bad := []easyjob.Schedule{
		{Name: "report-umbrella", Handler: "report", Cron: "0 0 8 * * *"},
		{Name: "report-hooli", Handler: "report", Cron: "0 0 25 * * *"},
	}
	_, err = c.CreateMany(ctx, bad, easyjob.AllowUnknownHandler())
	fmt.Println(errors.Is(err, easyjob.ErrInvalidCron))
	_, err = c.Task(ctx, "report-umbrella")
	fmt.Println(errors.Is(err, easyjob.ErrTaskNotFound))
	// Output:
	// report-acme report {"customer":"acme","days":7}
	// report-globex report {"customer":"globex","days":7}
	// report-initech report {"customer":"initech","days":7}
	// true
	// true
}

// Update replaces a schedule's whole definition (a fire already running
// completes with the one it started with); Versions keeps the one it
// replaced. Only a schedule created at runtime can be updated: a task
// registered in code is changed by its code.
func ExampleClient_Update() {
	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	s := easyjob.Schedule{Name: "report-acme", Handler: "report", Cron: "0 0 8 * * *",
		Args: ReportArgs{Customer: "acme", Days: 7}}
	if _, err := c.Create(ctx, s, easyjob.AllowUnknownHandler()); err != nil {
		fmt.Println(err)
		return
	}
	s.Cron, s.Args = "0 30 6 * * 1", ReportArgs{Customer: "acme", Days: 30}
	t, err := c.Update(ctx, s, easyjob.AllowUnknownHandler())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Revision, t.Cron, string(t.Args))
	_, err = c.Update(ctx, easyjob.Schedule{Name: "report-nobody", Handler: "report", Cron: "0 0 8 * * *"},
		easyjob.AllowUnknownHandler())
	fmt.Println(errors.Is(err, easyjob.ErrTaskNotFound))
	// Output:
	// 2 0 30 6 * * 1 {"customer":"acme","days":30}
	// true
}

// A schedule created at runtime is data: Remove deletes it at once (a
// fire of it already claimed is fenced: its result is not applied).
func ExampleClient_Remove() {
	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, err = c.Create(ctx, easyjob.Schedule{Name: "report-acme", Handler: "report", Cron: "0 0 8 * * *"},
		easyjob.AllowUnknownHandler())
	if err != nil {
		fmt.Println(err)
		return
	}
	gone, err := c.Remove(ctx, "report-acme", easyjob.RemoveOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(gone), gone[0].Name)
	_, err = c.Task(ctx, "report-acme")
	fmt.Println(errors.Is(err, easyjob.ErrTaskNotFound))
	// Output:
	// 1 report-acme
	// true
}

// Without AllowUnknownHandler, a schedule whose handler no live node
// registers is refused (nothing would run it); with it, the schedule is
// created and waits for a node with the handler.
func ExampleAllowUnknownHandler() {
	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	s := easyjob.Schedule{Name: "invoice-acme", Handler: "invoice", Cron: "0 0 1 1 * *"}
	_, err = c.Create(ctx, s)
	fmt.Println(errors.Is(err, easyjob.ErrUnknownHandler))
	if _, err := c.Create(ctx, s, easyjob.AllowUnknownHandler()); err != nil {
		fmt.Println(err)
		return
	}
	x, err := c.Explain(ctx, "invoice-acme", time.Time{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x.Blocked)
	// Output:
	// true
	// waiting: no live node has its handler "invoice"; the fires below come once one has
}

// OptionsOf turns a task's stored policies (TaskInfo.Options) back into
// Options: an edit of one field keeps the others.
func ExampleOptionsOf() {
	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, err = c.Create(ctx, easyjob.Schedule{Name: "report-acme", Handler: "report", Cron: "0 0 8 * * *",
		Options: []easyjob.Option{easyjob.TZ("Europe/Paris"), easyjob.Timeout(time.Minute)}},
		easyjob.AllowUnknownHandler())
	if err != nil {
		fmt.Println(err)
		return
	}
	t, err := c.Task(ctx, "report-acme")
	if err != nil {
		fmt.Println(err)
		return
	}
	t, err = c.Update(ctx, easyjob.Schedule{Name: t.Name, Handler: t.Handler, Cron: "0 0 9 * * *", Args: t.Args,
		Options: easyjob.OptionsOf(t.Options)}, easyjob.AllowUnknownHandler())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Cron, t.Options.Timezone, t.Options.Timeout)
	// Output:
	// 0 0 9 * * * Europe/Paris 1m0s
}

// NextFires reads a cron without a store: what a form shows before the
// schedule is saved. DST follows the wall clock: 02:30 does not exist in
// Paris on 31 March 2030 (02:00 becomes 03:00), so there is no fire that
// day.
func ExampleNextFires() {
	after := time.Date(2030, 3, 30, 12, 0, 0, 0, time.UTC)
	fires, err := easyjob.NextFires("0 30 2 * * *", "Europe/Paris", after, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range fires {
		fmt.Println(f.UTC().Format(time.DateTime))
	}
	_, err = easyjob.NextFires("0 30 25 * * *", "", after, 3)
	fmt.Println(errors.Is(err, easyjob.ErrInvalidCron))
	// Output:
	// 2030-04-01 00:30:00
	// 2030-04-02 00:30:00
	// 2030-04-03 00:30:00
	// true
}
