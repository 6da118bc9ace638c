package easyjob

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// removeBeforeRegister removes a task once, just before the node's row is
// written: an operator's Remove that checked while the node was not live
// yet, landing between its upsert and its registration.
type removeBeforeRegister struct {
	repository.Store
	name string
	done atomic.Bool
}

func (s *removeBeforeRegister) RegisterNode(ctx context.Context, group, name string, weight int) (repository.Node, error) {
	if s.done.CompareAndSwap(false, true) {
		if _, err := s.RemoveTask(ctx, group, s.name, repository.Removal{}); err != nil {
			return repository.Node{}, err
		}
	}
	return s.Store.RegisterNode(ctx, group, name, weight)
}

// TestRemoveRacingRegistration: a task removed between a node's upsert
// and its registration is registered again, and fires (issue 30, item 12:
// Remove was check-then-delete, and the node lost the task for good).
func TestRemoveRacingRegistration(t *testing.T) {
	store := &removeBeforeRegister{Store: memory.New(), name: "tick"}
	var l ledger
	start(t, fastConfig(store, groupFor(t)), func(s *Scheduler) {
		mustRegister(t, s, "tick", "* * * * * *", l.job(nil))
	})
	if !store.done.Load() {
		t.Fatal("the removal did not happen")
	}
	waitFor(t, 5*time.Second, "the removed task registered again and firing", func() bool { return l.count("tick") > 0 })
}
