package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// TestBackfillCLI: backfill runs each fire of the past range once, kind
// backfill with its nominal time, as history --json shows; bad ranges
// are usage errors and change nothing.
func TestBackfillCLI(t *testing.T) {
	const group = "backfill"
	c, _, client := echoGroup(t, group)
	ctx := context.Background()
	g := func(args ...string) []string { return append(args, "--group", group) }
	c.run(g("create", "b1", "--handler", "echo", "--cron", "*/2 * * * * *", "--args", `{"n":1}`, "--allow-unknown")...).want(t, 0, "create")

	r := c.run(g("backfill", "b1", "--from", "10s", "--json")...).want(t, 0, "backfill")
	var got struct {
		Task  string      `json:"task"`
		Fires []time.Time `json:"fires"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Task != "b1" || len(got.Fires) < 4 || len(got.Fires) > 6 {
		t.Fatalf("backfill --json = %q (%v); want the 4 to 6 even seconds of the last 10 s", r.stdout, err)
	}
	waitFor(t, "the backfill runs", func() bool {
		h := c.run(g("history", "b1", "--json")...)
		var runs []easyjob.ExecutionInfo
		if json.Unmarshal([]byte(h.stdout), &runs) != nil {
			return false
		}
		seen := map[time.Time]bool{}
		for _, x := range runs {
			if x.Kind == easyjob.RunBackfill && x.Status == "succeeded" {
				seen[x.ScheduledAt] = true
			}
		}
		for _, f := range got.Fires {
			if !seen[f] {
				return false
			}
		}
		return len(seen) == len(got.Fires)
	})
	c.run(g("backfill", "b1")...).want(t, exitUsage, "backfill without --from")
	c.run(g("backfill", "b1", "--from", "yesterday")...).want(t, exitUsage, "backfill --from garbage")
	c.run(g("backfill", "ghost", "--from", "1m")...).want(t, exitNotFound, "backfill an unknown task")
	c.run(g("backfill", "b1", "--from", "1m", "--to", "2m")...).want(t, exitInvalid, "backfill a range that ends before it starts")
	if ti, err := client.Task(ctx, "b1"); err != nil || !ti.BackfillNext.IsZero() {
		t.Errorf("after the backfill: %+v, %v; want none in progress", ti, err)
	}
}
