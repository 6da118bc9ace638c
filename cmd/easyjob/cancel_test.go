package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestCancelCLI: `easyjob cancel NAME --wait` cancels the job running on
// a node and prints the run as recorded, cancelled and naming the actor;
// a task with no run in progress is refused.
func TestCancelCLI(t *testing.T) {
	const group = "cancel"
	c, _, s := cliNode(t, group)
	started := make(chan struct{}, 64)
	if err := s.Register("slow", "* * * * * *", func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Register("idle", "0 0 0 1 1 *", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	runScheduler(t, s)
	g := func(args ...string) []string { return append(args, "--group", group) }
	c.run(g("cancel", "idle")...).want(t, exitRefused, "cancel of a task not running")
	select {
	case <-started:
	case <-time.After(15 * time.Second):
		t.Fatal("the job did not start")
	}
	waitFor(t, "the run's start record", func() bool {
		return strings.Contains(c.run(g("history", "slow", "--json")...).stdout, `"running"`)
	})
	r := c.run(g("cancel", "slow", "--wait", "--json", "--actor", "dave")...).want(t, 0, "cancel --wait")
	var got struct {
		Runs []easyjob.ExecutionInfo `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Runs) == 0 {
		t.Fatalf("cancel --wait --json = %q (%v)", r.stdout, err)
	}
	for _, x := range got.Runs {
		if x.Status != "cancelled" || !strings.Contains(x.Error, "cancelled by dave") {
			t.Errorf("cancelled run recorded %s: %q; want cancelled by dave", x.Status, x.Error)
		}
	}
	if a := c.run(g("audit", "--json")...).want(t, 0, "audit"); !strings.Contains(a.stdout, `"cancel"`) {
		t.Errorf("the audit log lacks the cancel: %s", a.stdout)
	}
}

// cliNode is a migrated database of its own with the CLI pointed at it,
// its store, and a quiet node of group on it to register tasks on (run
// it with runScheduler).
func cliNode(t *testing.T, group string) (*cli, repository.Store, *easyjob.Scheduler) {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	c := &cli{t: t, bin: buildCLI(t), dsn: dsn}
	c.run("migrate", "up").want(t, 0, "migrate up")
	store := pgtest.OpenStore(t, dsn)
	nop := zerolog.Nop()
	s, err := easyjob.New(easyjob.Config{Store: store, Group: group, SkipMigrate: true, Logger: &nop})
	if err != nil {
		t.Fatal(err)
	}
	return c, store, s
}
