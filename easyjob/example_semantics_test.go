package easyjob_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// exampleClient is a client of an in-memory group with no node running:
// schedules wait for their handler (AllowUnknownHandler).
func exampleClient() (*easyjob.Client, func()) {
	c, err := easyjob.NewClient(context.Background(), easyjob.Config{Store: memory.New()})
	if err != nil {
		panic(err)
	}
	return c, func() { _ = c.Close() }
}

// A report that may outlast its 5-minute interval: the fires due while
// it runs are dropped instead of piling up behind it.
func ExampleOverlap() {
	ctx := context.Background()
	c, done := exampleClient()
	defer done()
	_, err := c.Create(ctx, easyjob.Schedule{Name: "report", Handler: "report", Cron: "0 */5 * * * *",
		Options: []easyjob.Option{easyjob.Overlap(easyjob.OverlapSkip)}}, easyjob.AllowUnknownHandler())
	fmt.Println(err)
	_, err = c.Create(ctx, easyjob.Schedule{Name: "bad", Handler: "report", Cron: "0 */5 * * * *",
		Options: []easyjob.Option{easyjob.Overlap("sometimes")}}, easyjob.AllowUnknownHandler())
	fmt.Println(errors.Is(err, easyjob.ErrInvalidOption))
	// Output:
	// <nil>
	// true
}

// A sync that must not hold up the next one: at the next fire its
// context is cancelled, and after 30 s the next fire runs without it.
func ExampleOverlapGrace() {
	ctx := context.Background()
	c, done := exampleClient()
	defer done()
	_, err := c.Create(ctx, easyjob.Schedule{Name: "sync", Handler: "sync", Cron: "@every 1m",
		Options: []easyjob.Option{easyjob.Overlap(easyjob.OverlapTerminate), easyjob.OverlapGrace(30 * time.Second)}},
		easyjob.AllowUnknownHandler())
	fmt.Println(err)
	// Output: <nil>
}

// Run three times, then stop: the task is finished after its third fire.
func ExampleMaxFires() {
	ctx := context.Background()
	c, done := exampleClient()
	defer done()
	if _, err := c.Create(ctx, easyjob.Schedule{Name: "trial", Handler: "mail", Cron: "0 0 9 * * *",
		Options: []easyjob.Option{easyjob.MaxFires(3)}}, easyjob.AllowUnknownHandler()); err != nil {
		fmt.Println(err)
		return
	}
	x, err := c.Explain(ctx, "trial", time.Time{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(x.Next), "fires to come")
	// Output: 3 fires to come
}

// Run the fires a task would have had on a past morning, one after
// another, each with its own time (history kind backfill).
func ExampleClient_Backfill() {
	ctx := context.Background()
	c, done := exampleClient()
	defer done()
	if _, err := c.Create(ctx, easyjob.Schedule{Name: "rollup", Handler: "rollup", Cron: "0 0 * * * *"},
		easyjob.AllowUnknownHandler()); err != nil {
		fmt.Println(err)
		return
	}
	from := time.Date(2026, 11, 2, 6, 0, 0, 0, time.UTC)
	fires, err := c.Backfill(ctx, "rollup", from, from.Add(3*time.Hour))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range fires {
		fmt.Println(f.Format(time.DateTime))
	}
	_, err = c.Backfill(ctx, "rollup", from, from.Add(time.Hour))
	fmt.Println(errors.Is(err, easyjob.ErrBackfillInProgress))
	// Output:
	// 2026-11-02 06:00:00
	// 2026-11-02 07:00:00
	// 2026-11-02 08:00:00
	// 2026-11-02 09:00:00
	// true
}

// Three schedules on the same minute fire in the same second; spread
// over 30 s, each keeps its own offset and the storm is gone.
func ExampleClient_Forecast() {
	ctx := context.Background()
	from := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, spread := range []time.Duration{0, 30 * time.Second} {
		c, done := exampleClient() // a group of its own
		for _, name := range []string{"a", "b", "c"} {
			s := easyjob.Schedule{Name: fmt.Sprintf("%s-%v", name, spread), Handler: "h", Cron: "0 * * * * *"}
			if spread > 0 {
				s.Options = []easyjob.Option{easyjob.Spread(spread)}
			}
			if _, err := c.Create(ctx, s, easyjob.AllowUnknownHandler()); err != nil {
				fmt.Println(err)
				done()
				return
			}
		}
		f, err := c.Forecast(ctx, from, time.Hour)
		if err != nil {
			fmt.Println(err)
			done()
			return
		}
		fmt.Println(f.Total, "fires; busiest second:", f.Peaks[0].Fires)
		done()
	}
	// Output:
	// 180 fires; busiest second: 3
	// 180 fires; busiest second: 1
}
