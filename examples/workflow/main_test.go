package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestWorkflowTwoProcesses runs the example as two processes on one
// database and checks what the README promises: for each fire, one wf-d
// run that began after both wf-b and wf-c ended, four wf-shard runs with
// shards 0..3, and one wf-all run per process.
func TestWorkflowTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example for ~15 s")
	}
	dsn := pgtest.NewDatabase(t)
	bin := filepath.Join(t.TempDir(), "workflow")
	if out, err := exec.CommandContext(context.Background(), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var procs []*exec.Cmd
	for range 2 {
		cmd := exec.CommandContext(ctx, bin)
		cmd.Env = append(os.Environ(), "EASYJOB_DSN="+dsn)
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 10 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	defer func() {
		cancel()
		for _, p := range procs {
			_ = p.Wait()
		}
	}()

	c, err := easyjob.NewClient(ctx, easyjob.Config{DSN: dsn, Group: "workflow-example"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	history := func(name string) []easyjob.ExecutionInfo {
		xs, err := c.History(ctx, name, easyjob.HistoryFilter{Limit: 1000})
		if err != nil {
			return nil // not registered yet
		}
		return xs
	}
	// Two whole fires after both processes are up: wait for 3 of wf-d.
	deadline := time.Now().Add(40 * time.Second)
	for len(finished(history("wf-d"))) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("wf-d ran %d times in 40 s; want 3", len(finished(history("wf-d"))))
		}
		time.Sleep(200 * time.Millisecond)
	}
	ended := func(name string) map[time.Time]easyjob.ExecutionInfo {
		out := map[time.Time]easyjob.ExecutionInfo{}
		for _, x := range finished(history(name)) {
			if _, dup := out[x.ScheduledAt]; dup {
				t.Errorf("%s ran twice for %s", name, x.ScheduledAt)
			}
			out[x.ScheduledAt] = x
		}
		return out
	}
	bs, cs := ended("wf-b"), ended("wf-c")
	for fire, d := range ended("wf-d") {
		b, c := bs[fire], cs[fire]
		if b.FinishedAt.IsZero() || c.FinishedAt.IsZero() || d.StartedAt.Before(b.FinishedAt) || d.StartedAt.Before(c.FinishedAt) {
			t.Errorf("fire %s: wf-d began %s; wf-b ended %s, wf-c ended %s", fire, d.StartedAt, b.FinishedAt, c.FinishedAt)
		}
	}
	shards := map[time.Time]map[int]bool{}
	for _, x := range finished(history("wf-shard")) {
		if x.Shard == nil || x.Shards != 4 {
			t.Fatalf("wf-shard run %d: shard %v of %d", x.ID, x.Shard, x.Shards)
		}
		if shards[x.ScheduledAt] == nil {
			shards[x.ScheduledAt] = map[int]bool{}
		}
		if shards[x.ScheduledAt][*x.Shard] {
			t.Errorf("fire %s: shard %d twice", x.ScheduledAt, *x.Shard)
		}
		shards[x.ScheduledAt][*x.Shard] = true
	}
	complete := 0
	for _, s := range shards {
		if len(s) == 4 {
			complete++
		}
	}
	if complete < 2 {
		t.Errorf("%d fires of wf-shard with all 4 shards; want 2 or more: %v", complete, shards)
	}
	nodes := map[time.Time]map[int64]bool{}
	for _, x := range finished(history("wf-all")) {
		if nodes[x.ScheduledAt] == nil {
			nodes[x.ScheduledAt] = map[int64]bool{}
		}
		if nodes[x.ScheduledAt][x.NodeID] {
			t.Errorf("wf-all fire %s ran twice on node %d", x.ScheduledAt, x.NodeID)
		}
		nodes[x.ScheduledAt][x.NodeID] = true
	}
	both := 0
	for _, n := range nodes {
		if len(n) == 2 {
			both++
		}
	}
	if both < 2 {
		t.Errorf("%d fires of wf-all ran on both processes; want 2 or more", both)
	}
}

// finished keeps the runs that ended.
func finished(xs []easyjob.ExecutionInfo) []easyjob.ExecutionInfo {
	var out []easyjob.ExecutionInfo
	for _, x := range xs {
		if !x.FinishedAt.IsZero() {
			out = append(out, x)
		}
	}
	return out
}
