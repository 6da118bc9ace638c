package node

import (
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

// TestPickShares: when more tasks are due than a node may claim (a burst
// of one second's fires), each of three nodes on the default strategy
// picks its own third of the list, so that their claims do not race for
// the same rows; a node that may claim all of them picks all, in order.
func TestPickShares(t *testing.T) {
	strat, err := strategy.Lookup("default")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	due := repository.Due{Now: now}
	for i := range 30 {
		due.Tasks = append(due.Tasks, repository.Task{ID: repository.TaskID(i + 1), Version: 1, NextStartTime: now.Add(time.Second)})
	}
	live := []repository.Node{{ID: 1}, {ID: 2}, {ID: 3}}
	picked := map[repository.TaskID]repository.NodeID{}
	for _, self := range []repository.NodeID{1, 2, 3} {
		n := &Node{cfg: Config{PollInterval: time.Second}, picker: newPicker(strat, time.Minute, &recentCounter{})}
		n.picker.self = self
		refs, _, _ := n.pick(live, due, 20)
		if len(refs) != 10 {
			t.Fatalf("node %d picked %d of 30 with room for 20; want its share, 10", self, len(refs))
		}
		for _, r := range refs {
			if other, dup := picked[r.ID]; dup {
				t.Errorf("task %d picked by nodes %d and %d", r.ID, other, self)
			}
			picked[r.ID] = self
		}
	}
	n := &Node{cfg: Config{PollInterval: time.Second}, picker: newPicker(strat, time.Minute, &recentCounter{})}
	n.picker.self = 2
	refs, _, _ := n.pick(live, due, 30)
	if len(refs) != 30 || refs[0].ID != 1 {
		t.Fatalf("with room for all: %d picked, first %d; want 30 from task 1", len(refs), refs[0].ID)
	}
}

// TestLoadEveryIdle: an idle node's next pass comes early enough that a
// task entering the fetch window meanwhile is found at least half the
// window before it fires, at a varying instant (up to a poll interval,
// at most half the wait, early) so that it cannot keep meeting the same
// instant of a cron's period; a busy node's comes every poll interval.
func TestLoadEveryIdle(t *testing.T) {
	for _, c := range []struct{ poll, window, idle, spread time.Duration }{
		{time.Second, 5 * time.Second, 2500 * time.Millisecond, time.Second},
		{time.Second, 1500 * time.Millisecond, time.Second, 500 * time.Millisecond},
		{300 * time.Millisecond, 2 * time.Second, time.Second, 300 * time.Millisecond},
		{100 * time.Millisecond, 10 * time.Second, 5 * time.Second, 100 * time.Millisecond},
	} {
		n := &Node{cfg: Config{PollInterval: c.poll, FetchWindow: c.window}}
		if got := n.loadEvery(); got != c.poll {
			t.Errorf("busy, poll %v window %v: next pass in %v; want %v", c.poll, c.window, got, c.poll)
		}
		n.idle.Store(true)
		lo, hi := c.idle, time.Duration(0)
		for range 1000 {
			got := n.loadEvery()
			lo, hi = min(lo, got), max(hi, got)
			if got > c.idle || got <= c.idle-c.spread {
				t.Fatalf("idle, poll %v window %v: next pass in %v; want in (%v, %v]", c.poll, c.window, got, c.idle-c.spread, c.idle)
			}
			if ahead := c.window - got; ahead < c.window/2 && c.idle != c.poll { // at the poll interval: as busy
				t.Fatalf("idle, poll %v window %v: a task entering the window is found %v before it fires; want at least half the window", c.poll, c.window, ahead)
			}
		}
		// The instant varies over most of the spread, not a fixed wait.
		if hi-lo < c.spread*8/10 {
			t.Errorf("idle, poll %v window %v: waits from %v to %v; want them spread over %v", c.poll, c.window, lo, hi, c.spread)
		}
	}
}
