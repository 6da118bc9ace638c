package easyjob

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// recoveryCounter counts the orphans nodes recover.
type recoveryCounter struct {
	repository.Store
	recovered atomic.Int64
}

func (s *recoveryCounter) RecoverAll(ctx context.Context, rs []repository.Recovery) ([]error, error) {
	errs, err := s.Store.RecoverAll(ctx, rs)
	if err == nil {
		for _, e := range errs {
			if e == nil {
				s.recovered.Add(1)
			}
		}
	}
	return errs, err
}

// TestDatabaseClockStepJudgesNoPeerDead: the database's clock jumps an
// hour ahead (a failover to a standby whose clock is ahead, an NTP step).
// Every heartbeat written before the jump now looks an hour old, yet no
// node judges its live peers dead: none recovers a task, no fire runs
// twice, and the fires go on (issue 30, item 11).
func TestDatabaseClockStepJudgesNoPeerDead(t *testing.T) {
	var shift atomic.Int64
	store := &recoveryCounter{Store: memory.New(memory.WithClock(func() time.Time {
		return time.Now().Add(time.Duration(shift.Load()))
	}))}
	group := groupFor(t)
	var l ledger
	reg := func(s *Scheduler) {
		for i := range 6 {
			mustRegister(t, s, fmt.Sprintf("t%d", i), "* * * * * *", l.job(nil))
		}
	}
	// Heartbeats a second apart (the default), recovery passes 200 ms
	// apart: after the jump, each peer looks dead until its next beat,
	// and every node's recovery scans several times meanwhile.
	cfg := fastConfig(store, group)
	cfg.HeartbeatInterval = time.Second
	// Nodes beat out of phase, as real ones do: a third of a second apart.
	var nodes []*testNode
	for i := range 3 {
		if i > 0 {
			time.Sleep(cfg.HeartbeatInterval / 3)
		}
		nodes = append(nodes, start(t, cfg, reg))
	}
	waitAllLive(t, nodes)
	// Nodes judge peers only once they have seen the database for
	// DeadAfter (3 s here): step after that.
	waitFor(t, 15*time.Second, "fires before the step", func() bool { return l.count("t0") >= 5 })

	// Step just after a task holder's heartbeat: until its next one, a
	// second later, its peers beat under the new clock and see it dead.
	ts, err := store.Tasks(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	var holder *testNode
	for _, tn := range nodes {
		for _, x := range ts {
			if x.Status == repository.TaskDoing && x.NodeID == tn.n.ID() {
				holder = tn
			}
		}
	}
	if holder == nil {
		t.Fatal("no node holds a task")
	}
	holder.beatAfter(t, time.Now(), 5*time.Second)
	shift.Store(int64(time.Hour))
	stepped := time.Now()
	waitFor(t, 15*time.Second, "every task firing after the step", func() bool {
		seen := map[string]bool{}
		for _, f := range l.snapshot() {
			if f.started.After(stepped.Add(3 * time.Second)) {
				seen[f.task] = true
			}
		}
		return len(seen) == 6
	})
	if k := store.recovered.Load(); k > 0 {
		t.Fatalf("%d tasks recovered from live nodes after the database's clock stepped", k)
	}
	if d := l.duplicates(); len(d) > 0 {
		t.Fatalf("fires run twice after the clock step: %v", d)
	}
}
