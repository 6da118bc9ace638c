package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// forecastFlags is the setup of forecast: the horizon, how many peak
// seconds to list, and the summary's bucket.
func forecastFlags(fs *flag.FlagSet) action {
	hours := fs.Int("hours", 24, "how far ahead, in hours (1 to 168)")
	top := fs.Int("top", easyjob.ForecastPeaks, "list this many busiest seconds")
	by := fs.String("by", "hour", "summarise the fires per hour or per minute")
	return func(ctx context.Context, e *env, _ []string) error {
		if *hours < 1 || *hours > 7*24 {
			return usagef("--hours must be 1 to 168 (got %d)", *hours)
		}
		if *top < 0 {
			return usagef("--top must be 0 or more (got %d)", *top)
		}
		bucket, ok := map[string]time.Duration{"hour": time.Hour, "minute": time.Minute}[*by]
		if !ok {
			return usagef("--by must be hour or minute (got %q)", *by)
		}
		f, err := e.client.Forecast(ctx, time.Time{}, time.Duration(*hours)*time.Hour)
		if err != nil {
			return err
		}
		f.Peaks = f.Top(*top)
		if e.json {
			return e.emit(f)
		}
		printForecast(e, f, bucket)
		return nil
	}
}

// printForecast writes the total, the peak seconds, then the fires per
// bucket with each bucket's busiest second.
func printForecast(e *env, f easyjob.Forecast, bucket time.Duration) {
	fmt.Fprintf(e.out, "forecast of group %s from %s over %s: %d fires of %d schedules\n",
		e.group, f.From.UTC().Format(time.RFC3339), f.Horizon, f.Total, f.Schedules)
	if f.Unparsed > 0 {
		fmt.Fprintf(e.out, "(%d schedules left out: their cron does not parse here)\n", f.Unparsed)
	}
	if len(f.Peaks) > 0 {
		fmt.Fprintln(e.out, "\npeak seconds (UTC):")
		for _, p := range f.Peaks {
			fmt.Fprintf(e.out, "  %s  %d\n", p.At.UTC().Format(time.RFC3339), p.Fires)
		}
	}
	n := int((f.Horizon + bucket - 1) / bucket)
	fires, busiest := make([]int, n), make([]int, n)
	for _, s := range f.Seconds {
		i := int(s.At.Sub(f.From) / bucket)
		fires[i] += s.Fires
		busiest[i] = max(busiest[i], s.Fires)
	}
	name := map[time.Duration]string{time.Hour: "hour", time.Minute: "minute"}[bucket]
	fmt.Fprintf(e.out, "\nfires per %s (UTC; a %s with none is left out):\n", name, name)
	tb := newTable(e.out, "FROM", "FIRES", "BUSIEST-SECOND")
	for i := range n {
		if fires[i] == 0 {
			continue
		}
		at := f.From.Add(time.Duration(i) * bucket).UTC()
		tb.row(at.Format(time.RFC3339), fmt.Sprint(fires[i]), fmt.Sprint(busiest[i]))
	}
	tb.flush()
}
