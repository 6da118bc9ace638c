package easyjob

import (
	"fmt"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// A node that holds MaxClaims claims renews them fire after fire, and the
// due tasks beyond them never found room: they never ran (lost fires, not
// late ones). Once a task waits past the steal threshold with every claim
// taken, the node stops keeping its claims, so the overdue task is
// claimed first at the next pass: every task runs, later, none never.
func TestCrowdedNodeRotatesItsClaims(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testCrowdedRotates(t, memory.New(), "crowded") })
	t.Run("postgres", func(t *testing.T) {
		store, group := pgStore(t)
		testCrowdedRotates(t, store, group)
	})
}

func testCrowdedRotates(t *testing.T, store repository.Store, group string) {
	var l ledger
	cfg := fastConfig(store, group)
	cfg.Workers, cfg.MaxClaims = 1, 2
	cfg.StealAfter = 400 * time.Millisecond
	names := []string{"a", "b", "c"}
	start(t, cfg, func(s *Scheduler) {
		for _, name := range names {
			mustRegister(t, s, name, "* * * * * *", l.job(nil))
		}
	})
	waitFor(t, 15*time.Second, "every task run twice with room for two claims", func() bool {
		for _, name := range names {
			if l.count(name) < 2 {
				return false
			}
		}
		return true
	})
	if d := l.duplicates(); len(d) > 0 {
		t.Fatalf("fires run twice: %v", d)
	}
}

// Three full nodes sharing more every-second tasks than all their claims:
// each is crowded, each rotates its claims, and every task still runs,
// never twice for one fire (the releases and claims stay fenced).
func TestCrowdedClusterRunsEveryTaskOnce(t *testing.T) {
	var l ledger
	store := memory.New()
	cfg := fastConfig(store, "crowded-cluster")
	cfg.Strategy = "id_hash"
	cfg.Workers, cfg.MaxClaims = 1, 2
	cfg.StealAfter = 400 * time.Millisecond
	const tasks = 9 // room for 6 in all
	var nodes []*testNode
	for range 3 {
		nodes = append(nodes, start(t, cfg, everySecond(t, &l, tasks)))
	}
	waitAllLive(t, nodes)
	waitFor(t, 20*time.Second, "every task run twice with room for two thirds of them", func() bool {
		for i := range tasks {
			if l.count(fmt.Sprintf("t%04d", i)) < 2 {
				return false
			}
		}
		return true
	})
	if d := l.duplicates(); len(d) > 0 {
		t.Fatalf("fires run twice: %v", d)
	}
}
