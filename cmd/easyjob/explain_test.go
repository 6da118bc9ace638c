package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// TestExplainCLI: explain lists the next fires of a running schedule,
// says what became of a fire that ran and of a time between fires, and
// why a paused task fires no more.
func TestExplainCLI(t *testing.T) {
	const group = "why"
	c, _, client := echoGroup(t, group)
	ctx := context.Background()
	g := func(args ...string) []string { return append(args, "--group", group) }
	c.run(g("create", "e1", "--handler", "echo", "--cron", "* * * * * *", "--args", `{"n":1}`, "--allow-unknown")...).want(t, 0, "create")
	var ran easyjob.ExecutionInfo
	waitFor(t, "a run of e1", func() bool {
		runs, err := client.History(ctx, "e1", easyjob.HistoryFilter{Limit: 1})
		if err != nil || len(runs) == 0 || runs[0].Status != "succeeded" {
			return false
		}
		ran = runs[0]
		return true
	})

	explain := func(args ...string) easyjob.Explanation {
		t.Helper()
		r := c.run(g(append([]string{"explain", "e1", "--json"}, args...)...)...).want(t, 0, "explain "+strings.Join(args, " "))
		var x easyjob.Explanation
		if err := json.Unmarshal([]byte(r.stdout), &x); err != nil {
			t.Fatalf("explain --json: %v\n%s", err, r.stdout)
		}
		return x
	}
	x := explain("--at", ran.ScheduledAt.Format(time.RFC3339Nano))
	if len(x.Next) != 10 || x.Blocked != "" || x.Fire == nil || !x.Fire.Scheduled || len(x.Fire.Runs) != 1 ||
		x.Fire.Runs[0].ID != ran.ID || !strings.Contains(x.Fire.Verdict, "ran on") {
		t.Fatalf("explain of a fire that ran = %+v; want 10 fires ahead and the run %d", x, ran.ID)
	}
	between := explain("--at", ran.ScheduledAt.Add(300*time.Millisecond).Format(time.RFC3339Nano))
	if between.Fire.Scheduled || !between.Fire.Fire.Equal(ran.ScheduledAt) || !strings.Contains(between.Fire.Verdict, "is not a fire of") {
		t.Errorf("explain between fires = %+v; want the fire before it named", between.Fire)
	}

	c.run(g("pause", "e1")...).want(t, 0, "pause")
	paused := c.run(g("explain", "e1")...).want(t, 0, "explain a paused task")
	if !strings.Contains(paused.stdout, "next fire: none on its own: paused at") {
		t.Errorf("explain of a paused task:\n%s\nwant why it does not fire", paused.stdout)
	}
	c.run(g("explain", "e1", "--at", "yesterday")...).want(t, exitUsage, "explain --at garbage")
	c.run(g("explain", "ghost")...).want(t, exitNotFound, "explain an unknown task")
}
