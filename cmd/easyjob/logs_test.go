package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// TestLogsCLI: `easyjob logs NAME` prints what the newest run logged,
// `logs NAME RUN --json` a given run with its log, and `--follow` the
// lines of a running job as they come, until it ends; an unknown task
// or run exits 3, a bad RUN 2.
func TestLogsCLI(t *testing.T) {
	const group = "logs"
	c, store, s := cliNode(t, group)
	if err := s.Register("step", "* * * * * *", func(ctx context.Context) error {
		easyjob.Logger(ctx).Info("copied", "rows", 7)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	if err := s.Register("slow", "0 0 0 1 1 *", func(ctx context.Context) error {
		easyjob.Logger(ctx).Info("phase one")
		select {
		case <-release:
		case <-ctx.Done():
		}
		easyjob.Logger(ctx).Info("phase two")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	runScheduler(t, s)
	g := func(args ...string) []string { return append(args, "--group", group) }
	waitFor(t, "a run of step", func() bool {
		return strings.Contains(c.run(g("history", "step", "--json")...).stdout, `"succeeded"`)
	})
	r := c.run(g("logs", "step")...).want(t, 0, "logs step")
	if !strings.Contains(r.stdout, "msg=copied rows=7") || !strings.Contains(r.stderr, "# run ") {
		t.Fatalf("logs step: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	var hist []easyjob.ExecutionInfo
	if err := json.Unmarshal([]byte(c.run(g("history", "step", "--json")...).stdout), &hist); err != nil || len(hist) == 0 {
		t.Fatalf("history --json: %v", err)
	}
	id := hist[len(hist)-1].ID
	var l easyjob.RunLog
	r = c.run(g("logs", "step", strconv.FormatInt(id, 10), "--json")...).want(t, 0, "logs step RUN --json")
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || l.Run.ID != id || !strings.Contains(l.Log, "msg=copied") {
		t.Fatalf("logs --json = %q (%v)", r.stdout, err)
	}
	c.run(g("logs", "nope")...).want(t, exitNotFound, "logs of an unknown task")
	c.run(g("logs", "step", "999999999")...).want(t, exitNotFound, "logs of an unknown run")
	c.run(g("logs", "step", "x")...).want(t, exitUsage, "logs with a bad RUN")

	ctx := context.Background()
	cl, err := easyjob.NewClient(ctx, easyjob.Config{Store: store, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Trigger(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "slow's first line stored while it runs", func() bool {
		l, err := cl.RunLog(ctx, "slow", 0)
		return err == nil && strings.Contains(l.Log, "phase one")
	})
	go func() {
		time.Sleep(time.Second) // the follower is polling by then; it must see the end, whenever it comes
		close(release)
	}()
	r = c.run(g("logs", "slow", "--follow")...).want(t, 0, "logs --follow")
	if !strings.Contains(r.stdout, "phase one") || !strings.Contains(r.stdout, "phase two") ||
		strings.Count(r.stdout, "phase one") != 1 || !strings.Contains(r.stderr, "# succeeded") {
		t.Fatalf("logs --follow: stdout %q, stderr %q", r.stdout, r.stderr)
	}
}
