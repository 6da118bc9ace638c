package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// TestForecastCLI: forecast counts the group's schedules' fires per
// second over the hours asked, the storm's second first among the peaks;
// create --spread stores a spread whose schedule's fires leave the storm;
// bad flags are usage errors.
func TestForecastCLI(t *testing.T) {
	const group = "fc"
	c, _, client := echoGroup(t, group)
	ctx := context.Background()
	g := func(args ...string) []string { return append(args, "--group", group) }
	for _, name := range []string{"s1", "s2", "s3"} {
		c.run(g("create", name, "--handler", "echo", "--cron", "0 0 * * * *", "--args", `{"n":1}`, "--allow-unknown")...).want(t, 0, "create "+name)
	}
	c.run(g("create", "spread", "--handler", "echo", "--cron", "0 0 * * * *", "--args", `{"n":1}`, "--spread", "1h", "--allow-unknown")...).want(t, 0, "create --spread")
	row, err := client.Control().Task(ctx, group, "spread")
	if err != nil || row.Options.Spread != time.Hour {
		t.Fatalf("spread stored as %v (%v), want 1h", row.Options.Spread, err)
	}
	off := easyjob.SpreadOffset("spread", time.Hour)
	if got := row.NextStartTime.Add(-off); got.Minute() != 0 || got.Second() != 0 {
		t.Errorf("next fire %s: want an hour + %v", row.NextStartTime.Format(time.RFC3339Nano), off)
	}

	r := c.run(g("forecast", "--hours", "3", "--top", "2", "--json")...).want(t, 0, "forecast --json")
	var f easyjob.Forecast
	if err := json.Unmarshal([]byte(r.stdout), &f); err != nil {
		t.Fatalf("forecast --json: %v\n%s", err, r.stdout)
	}
	// The echo node registers a yearly task: it counts as a schedule,
	// with no fire in 3 h (but on New Year's Eve).
	if f.Horizon != 3*time.Hour || len(f.Minutes) != 180 || len(f.Peaks) != 2 || f.Schedules < 4 || f.Total < 12 {
		t.Fatalf("forecast = horizon %v, %d minutes, %d peaks, %d schedules, %d fires; want 3h, 180, 2, 4+, 12+", f.Horizon, len(f.Minutes), len(f.Peaks), f.Schedules, f.Total)
	}
	if p := f.Peaks[0]; p.Fires != 3 || p.At.Minute() != 0 || p.At.Second() != 0 {
		t.Errorf("busiest second %+v: want the 3 storm schedules on the hour", p)
	}
	for _, s := range f.Seconds {
		if s.At.Sub(s.At.Truncate(time.Hour)) == off.Truncate(time.Second) && s.Fires != 1 {
			t.Errorf("second %s: %d fires, want the spread schedule's alone", s.At, s.Fires)
		}
	}

	text := c.run(g("forecast", "--by", "minute")...).want(t, 0, "forecast")
	for _, want := range []string{"forecast of group fc from ", "peak seconds (UTC):", "fires per minute (UTC", "BUSIEST-SECOND"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("forecast:\n%s\nwant %q", text.stdout, want)
		}
	}
	c.run(g("forecast", "--hours", "0")...).want(t, exitUsage, "forecast --hours 0")
	c.run(g("forecast", "--by", "week")...).want(t, exitUsage, "forecast --by week")
}
