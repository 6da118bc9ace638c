package easyjob

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

func billingCleanup(context.Context) error  { return nil }
func shippingCleanup(context.Context) error { return nil }

// TestGroupCollisionReported: two services share a database and the
// default group, and both register a task "cleanup" with their own job.
// Each node would run only its own; the collision is reported: an ERROR
// log and Health.Collisions naming the task and both nodes (issue 30,
// item 5). Replicas of one service (same job) are no collision.
func TestGroupCollisionReported(t *testing.T) {
	store := memory.New()
	group := groupFor(t)
	billing := start(t, fastConfig(store, group), func(s *Scheduler) {
		mustRegister(t, s, "cleanup", "0 0 * * * *", billingCleanup)
	})
	replica := start(t, fastConfig(store, group), func(s *Scheduler) {
		mustRegister(t, s, "cleanup", "0 0 * * * *", billingCleanup)
	})
	waitAllLive(t, []*testNode{billing, replica})
	if c := replica.s.Health().Collisions; len(c) != 0 {
		t.Fatalf("replicas of one service reported a collision: %v", c)
	}
	shipping := start(t, fastConfig(store, group), func(s *Scheduler) {
		mustRegister(t, s, "cleanup", "0 0 * * * *", shippingCleanup)
	})
	waitFor(t, 5*time.Second, "the collision in the new node's health", func() bool {
		c := shipping.s.Health().Collisions
		return len(c) == 1 && strings.HasPrefix(c[0], "cleanup: ") &&
			strings.Contains(c[0], "billingCleanup") && strings.Contains(c[0], "shippingCleanup")
	})
}

// TestCollisionsFromTaskSets: the store-level view of collisions.
func TestCollisionsFromTaskSets(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	publish := func(name string, fps map[string]string) {
		set, err := store.PublishTaskSet(ctx, repository.TaskSetEntries(fps))
		if err != nil {
			t.Fatal(err)
		}
		n, err := store.RegisterNode(ctx, "g", name, 1)
		if err != nil {
			t.Fatal(err)
		}
		n.TaskSet = set
		if _, err := store.Heartbeat(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	publish("a", map[string]string{"cleanup": "svc-a:cleanup", "report": "svc-a:report"})
	publish("b", map[string]string{"cleanup": "svc-a:cleanup"})
	publish("old", map[string]string{"report": ""}) // published no fingerprint
	live, err := repository.LiveTaskSets(ctx, store, "g", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if c := repository.Collisions(live); len(c) != 0 {
		t.Fatalf("collisions among one service's nodes: %+v", c)
	}
	for _, n := range live {
		if !n.Registers("report") && n.Node.Name != "b" {
			t.Errorf("node %s does not register report", n.Node.Name)
		}
		if n.Registers("report" + "\x1f" + "svc-a:report") {
			t.Errorf("a fingerprint entry counts as a task name")
		}
	}
	publish("c", map[string]string{"cleanup": "svc-b:cleanup"})
	live, _ = repository.LiveTaskSets(ctx, store, "g", time.Minute)
	c := repository.Collisions(live)
	if len(c) != 1 || c[0].Name != "cleanup" || len(c[0].Nodes) != 2 || len(c[0].Nodes["svc-a:cleanup"]) != 2 {
		t.Fatalf("collisions %+v, want cleanup: svc-a on 2 nodes vs svc-b", c)
	}
	if d := c[0].Describe(); !strings.Contains(d, "(a)") || !strings.Contains(d, "(c)") || !strings.Contains(d, " vs ") {
		t.Errorf("Describe = %q", d)
	}
}
