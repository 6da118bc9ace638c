package easyjob

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// stallStore holds every Finish while stalled (a database answering
// slowly, a batch stuck behind locks), then lets them through.
type stallStore struct {
	repository.Store
	mu   sync.Mutex
	gate chan struct{} // nil, or open once closed
}

func (s *stallStore) stall() {
	s.mu.Lock()
	s.gate = make(chan struct{})
	s.mu.Unlock()
}

func (s *stallStore) resume() {
	s.mu.Lock()
	if s.gate != nil {
		close(s.gate)
		s.gate = nil
	}
	s.mu.Unlock()
}

func (s *stallStore) Finish(ctx context.Context, fs []repository.Finish) ([]repository.FinishResult, error) {
	s.mu.Lock()
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Store.Finish(ctx, fs)
}

// firesAfter returns, per task, the distinct scheduled times fired after at.
func firesAfter(l *ledger, at time.Time) map[string]map[time.Time]bool {
	out := map[string]map[time.Time]bool{}
	for _, f := range l.snapshot() {
		if f.scheduled.After(at) {
			if out[f.task] == nil {
				out[f.task] = map[time.Time]bool{}
			}
			out[f.task][f.scheduled] = true
		}
	}
	return out
}

// settledSince waits until every task's row is pending a fire after at
// (its finish for at is written: nothing of it is in flight).
func settledSince(t *testing.T, store repository.Store, group string, k int, at time.Time) {
	t.Helper()
	waitFor(t, 5*time.Second, "every finish written", func() bool {
		ts, err := store.Tasks(context.Background(), group)
		if err != nil || len(ts) != k {
			return false
		}
		for _, r := range ts {
			if !r.NextStartTime.After(at) {
				return false
			}
		}
		return true
	})
}

// TestNextFireDoesNotWaitForFinish: while finishes hang, a claimed task's
// next fire still runs on its second (its claim is queued when the job
// ends, not when the write returns), exactly once, and its run is written
// as succeeded once the database answers.
func TestNextFireDoesNotWaitForFinish(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testNextFireDoesNotWaitForFinish(t, memory.New(), groupFor(t)) })
	// The successor predicts the row PostgreSQL writes (version, next fire
	// at its precision): a wrong prediction would record these runs fenced.
	t.Run("postgres", func(t *testing.T) {
		pg, group := pgStore(t)
		testNextFireDoesNotWaitForFinish(t, pg, group)
	})
}

func testNextFireDoesNotWaitForFinish(t *testing.T, mem repository.Store, group string) {
	const k = 5
	store := &stallStore{Store: mem}
	var l ledger
	start(t, fastConfig(store, group), everySecond(t, &l, k))
	t.Cleanup(store.resume) // before the node stops (cleanups run last first)
	waitFor(t, 5*time.Second, "fires", func() bool { return len(firesAfter(&l, time.Time{})) == k })
	last := l.snapshot()[len(l.snapshot())-1].scheduled
	settledSince(t, mem, group, k, last)

	stalledAt := time.Now()
	store.stall()
	// The fire already claimed, then its successor: two fires per task
	// while nothing is written.
	waitFor(t, 4*time.Second, "two fires of every task during the stall", func() bool {
		got := firesAfter(&l, stalledAt)
		for _, n := range names(k) {
			if len(got[n]) < 2 {
				return false
			}
		}
		return true
	})
	store.resume()
	resumed := time.Now()
	waitFor(t, 5*time.Second, "fires after the stall", func() bool {
		return len(firesAfter(&l, resumed.Add(time.Second))) == k
	})
	assertEachSecondOnce(t, &l, names(k), stalledAt, resumed.Add(time.Second))
	c, err := NewClient(context.Background(), Config{Store: mem, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the stalled runs recorded", func() bool {
		for _, n := range names(k) {
			h, err := c.History(context.Background(), n, HistoryFilter{Since: stalledAt.Add(-time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			ok := 0
			for _, e := range h {
				if e.Status == repository.ExecFenced {
					t.Fatalf("%s: run of %s recorded fenced", n, e.ScheduledAt.Format(time.TimeOnly))
				}
				if e.Status == repository.ExecSucceeded && e.ScheduledAt.After(stalledAt) && e.ScheduledAt.Before(resumed) {
					ok++
				}
			}
			if ok < 2 {
				return false
			}
		}
		return true
	})
}

// TestUnconfirmedFireVoidedByPause: a pause that lands while a finish is
// held up parks the task; the next fire, started before that finish
// returned, is recorded fenced (not succeeded), and nothing fires after.
func TestUnconfirmedFireVoidedByPause(t *testing.T) {
	st := startStallable(t)
	store, c := st.store, st.client
	l := &st.ledger
	waitFor(t, 5*time.Second, "a fire", func() bool { return len(l.snapshot()) > 0 })
	settledSince(t, st.mem, st.group, 1, l.snapshot()[len(l.snapshot())-1].scheduled)

	stalledAt := time.Now()
	store.stall()
	waitFor(t, 3*time.Second, "the claimed fire", func() bool { return len(firesAfter(l, stalledAt)["t0000"]) == 1 })
	if _, err := c.Pause(context.Background(), "t0000"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "the next fire, before its claim is confirmed", func() bool {
		return len(firesAfter(l, stalledAt)["t0000"]) == 2
	})
	store.resume()
	var second time.Time
	for at := range firesAfter(l, stalledAt)["t0000"] {
		if at.After(second) {
			second = at
		}
	}
	waitFor(t, 5*time.Second, "the unconfirmed run recorded fenced", func() bool {
		h, err := c.History(context.Background(), "t0000", HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range h {
			if e.ScheduledAt.Equal(second) {
				if e.Status != repository.ExecFenced && e.Status != repository.ExecRunning {
					t.Fatalf("run started before its claim was confirmed, then voided by a pause: recorded %s, want fenced", e.Status)
				}
				return e.Status == repository.ExecFenced
			}
		}
		return false
	})
	waitParked(t, c, "t0000")
	settled := len(l.snapshot())
	time.Sleep(1500 * time.Millisecond) // a paused task must stay quiet: nothing to wait for
	if n := len(l.snapshot()); n != settled {
		t.Fatalf("%d fires after the pause took effect", n-settled)
	}
}

// TestTriggeredPausedRunQueuesNoNextFire: the triggered run of a paused
// task is parked again by its finish, so no next fire is queued before
// that finish is written: with the finish held up past the next second,
// nothing else fires.
func TestTriggeredPausedRunQueuesNoNextFire(t *testing.T) {
	st := startStallable(t)
	store, c, l := st.store, st.client, &st.ledger
	if _, err := c.Pause(context.Background(), "t0000"); err != nil {
		t.Fatal(err)
	}
	waitParked(t, c, "t0000")
	store.stall()
	triggeredAt := time.Now()
	if _, err := c.Trigger(context.Background(), "t0000"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the triggered run", func() bool { return len(firesAfter(l, triggeredAt)["t0000"]) == 1 })
	// A window, not a wait: the finish is held past the next second.
	time.Sleep(1500 * time.Millisecond)
	if n := len(firesAfter(l, triggeredAt)["t0000"]); n != 1 {
		t.Fatalf("%d runs while the triggered run's finish was held, want 1 (a next fire was queued for a paused task)", n)
	}
	store.resume()
	waitParked(t, c, "t0000")
}

// stallable is one node with one every-second task (t0000) on a memory
// store whose finishes can be held up, and a client of its group.
type stallable struct {
	mem    *memory.Store
	store  *stallStore
	group  string
	ledger ledger
	client *Client
}

func startStallable(t *testing.T) *stallable {
	t.Helper()
	st := &stallable{mem: memory.New(), group: groupFor(t)}
	st.store = &stallStore{Store: st.mem}
	start(t, fastConfig(st.store, st.group), everySecond(t, &st.ledger, 1))
	t.Cleanup(st.store.resume)
	c, err := NewClient(context.Background(), Config{Store: st.mem, Group: st.group})
	if err != nil {
		t.Fatal(err)
	}
	st.client = c
	return st
}

// waitParked waits until task name is paused in the store.
func waitParked(t *testing.T, c *Client, name string) {
	t.Helper()
	waitFor(t, 5*time.Second, name+" parked paused", func() bool {
		info, err := c.Task(context.Background(), name)
		return err == nil && info.Status == repository.TaskPaused
	})
}
