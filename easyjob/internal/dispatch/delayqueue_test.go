package dispatch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/repository"
)

var dqT0 = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

func dqItem(id int64, at time.Duration) *claim.Claim {
	return claim.New(repository.Task{ID: repository.TaskID(id)}, testSpec, dqT0.Add(at), 0)
}

func dqIDs(cs []*claim.Claim) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = int64(c.Task.ID)
	}
	return out
}

// dqSignalled reports (and consumes) a pending changed signal.
func dqSignalled(q *DelayQueue) bool {
	select {
	case <-q.Changed():
		return true
	default:
		return false
	}
}

func TestDelayQueueOrder(t *testing.T) {
	q := NewDelayQueue()
	if due, next := q.PopDue(dqT0.Add(time.Hour)); len(due) != 0 || !next.IsZero() {
		t.Fatalf("empty queue: %v, %v", due, next)
	}
	// Pushed out of time order; ties at the same time go in push order.
	for _, it := range []struct {
		id int64
		at time.Duration
	}{{5, 3 * time.Second}, {9, time.Second}, {2, 2 * time.Second}, {7, time.Second}, {1, 3 * time.Second}, {3, time.Second}} {
		q.Push(dqItem(it.id, it.at))
	}
	if q.Len() != 6 {
		t.Fatalf("len = %d", q.Len())
	}
	// Nothing due before the first.
	if due, next := q.PopDue(dqT0.Add(999 * time.Millisecond)); len(due) != 0 || !next.Equal(dqT0.Add(time.Second)) {
		t.Fatalf("before the first: %v, next %v", dqIDs(due), next)
	}
	// Due is inclusive: at exactly 1s the three 1s items, as pushed.
	due, next := q.PopDue(dqT0.Add(time.Second))
	if got := dqIDs(due); !slices.Equal(got, []int64{9, 7, 3}) || !next.Equal(dqT0.Add(2*time.Second)) {
		t.Fatalf("at 1s: %v, next %v", got, next)
	}
	for _, c := range due {
		if c.QueueIndex != -1 {
			t.Errorf("popped item %d keeps index %d", c.Task.ID, c.QueueIndex)
		}
	}
	due, next = q.PopDue(dqT0.Add(time.Hour))
	if got := dqIDs(due); !slices.Equal(got, []int64{2, 5, 1}) || !next.IsZero() {
		t.Fatalf("the rest: %v, next %v", got, next)
	}
	if q.Len() != 0 {
		t.Fatalf("len = %d after popping all", q.Len())
	}
}

func TestDelayQueueRemove(t *testing.T) {
	q := NewDelayQueue()
	items := make([]*claim.Claim, 7)
	for i := range items {
		items[i] = dqItem(int64(i+1), time.Duration(i)*time.Second)
		q.Push(items[i])
	}
	// Middle items, the head and the tail.
	for _, i := range []int{3, 1, 0, 6} {
		if !q.Remove(items[i]) {
			t.Fatalf("remove item %d: false", i+1)
		}
		if items[i].QueueIndex != -1 {
			t.Errorf("removed item %d keeps index %d", i+1, items[i].QueueIndex)
		}
		if q.Remove(items[i]) {
			t.Fatalf("second remove of item %d: true", i+1)
		}
	}
	// Never pushed: index 0 must not remove whatever is at 0.
	stranger := claim.New(repository.Task{ID: 99}, testSpec, time.Time{}, 0)
	if q.Remove(stranger) {
		t.Fatal("removed an item that was never queued")
	}
	due, next := q.PopDue(dqT0.Add(time.Hour))
	if got := dqIDs(due); !slices.Equal(got, []int64{3, 5, 6}) || !next.IsZero() {
		t.Fatalf("after removals: %v", got)
	}
	// A popped item cannot be removed.
	if q.Remove(due[0]) {
		t.Fatal("removed a popped item")
	}
	// Re-pushing a removed item works.
	q.Push(items[3])
	if due, _ := q.PopDue(dqT0.Add(time.Hour)); !slices.Equal(dqIDs(due), []int64{4}) {
		t.Fatalf("re-pushed: %v", dqIDs(due))
	}
}

// CountAt counts the claims still queued at one fire time.
func TestDelayQueueCountAt(t *testing.T) {
	q := NewDelayQueue()
	items := []*claim.Claim{dqItem(1, time.Second), dqItem(2, time.Second), dqItem(3, time.Second), dqItem(4, 2*time.Second)}
	for _, c := range items {
		q.Push(c)
	}
	q.Remove(items[1])
	for _, c := range []struct {
		at   time.Duration
		want int
	}{{time.Second, 2}, {2 * time.Second, 1}, {3 * time.Second, 0}} {
		if got := q.CountAt(dqT0.Add(c.at)); got != c.want {
			t.Errorf("CountAt(+%v) = %d, want %d", c.at, got, c.want)
		}
	}
	q.PopDue(dqT0.Add(time.Second))
	if got := q.CountAt(dqT0.Add(time.Second)); got != 0 {
		t.Errorf("CountAt after the pop = %d, want 0", got)
	}
}

func TestDelayQueueDrain(t *testing.T) {
	q := NewDelayQueue()
	items := []*claim.Claim{dqItem(1, 3*time.Second), dqItem(2, time.Second), dqItem(3, 2*time.Second)}
	for _, c := range items {
		q.Push(c)
	}
	out := q.Drain()
	if len(out) != 3 || q.Len() != 0 {
		t.Fatalf("drain: %d items, %d left", len(out), q.Len())
	}
	seen := map[int64]bool{}
	for _, c := range out {
		seen[int64(c.Task.ID)] = true
		if c.QueueIndex != -1 {
			t.Errorf("drained item %d keeps index %d", c.Task.ID, c.QueueIndex)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("drain returned %v", dqIDs(out))
	}
	for _, c := range items {
		if q.Remove(c) {
			t.Errorf("removed drained item %d", c.Task.ID)
		}
	}
	if due, next := q.PopDue(dqT0.Add(time.Hour)); len(due) != 0 || !next.IsZero() {
		t.Fatal("queue not empty after drain")
	}
	if got := q.Drain(); len(got) != 0 {
		t.Fatalf("second drain: %v", dqIDs(got))
	}
	// Usable after a drain.
	q.Push(dqItem(4, 0))
	if due, _ := q.PopDue(dqT0); !slices.Equal(dqIDs(due), []int64{4}) {
		t.Fatalf("after drain: %v", dqIDs(due))
	}
}

func TestDelayQueueChangedSignal(t *testing.T) {
	q := NewDelayQueue()
	if dqSignalled(q) {
		t.Fatal("signal on a new queue")
	}
	q.Push(dqItem(1, 10*time.Second))
	if !dqSignalled(q) {
		t.Fatal("no signal for the first item")
	}
	q.Push(dqItem(2, 20*time.Second)) // later: the earliest did not change
	if dqSignalled(q) {
		t.Fatal("signal for an item behind the head")
	}
	q.Push(dqItem(3, 5*time.Second)) // new earliest
	if !dqSignalled(q) {
		t.Fatal("no signal for a new earliest item")
	}
	// Same time as the head, whatever its id: the earliest time is the
	// same, so the boss's wait is too.
	q.Push(dqItem(0, 5*time.Second))
	q.Push(dqItem(4, 5*time.Second))
	if dqSignalled(q) {
		t.Fatal("signal for an item at the head's time")
	}
	// Signals coalesce and push never blocks when nobody listens.
	for i := range 10 {
		q.Push(dqItem(int64(100+i), -time.Duration(i+1)*time.Second))
	}
	if !dqSignalled(q) || dqSignalled(q) {
		t.Fatal("want exactly one pending signal after many new heads")
	}
}

// TestDelayQueueConcurrent pushes, removes and pops from many goroutines
// (run with -race): every item comes out exactly once, by pop, remove or
// the final drain.
func TestDelayQueueConcurrent(t *testing.T) {
	const (
		pushers = 8
		each    = 500
	)
	q := NewDelayQueue()
	var (
		mu      sync.Mutex
		outcome = map[int64]string{}
		dup     atomic.Int64
	)
	record := func(id int64, how string) {
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := outcome[id]; ok {
			dup.Add(1)
			t.Errorf("item %d came out twice: %s and %s", id, prev, how)
		}
		outcome[id] = how
	}
	stop := make(chan struct{})
	var popper sync.WaitGroup
	popper.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-q.Changed():
			default:
			}
			now := dqT0.Add(time.Duration(rand.IntN(1000)) * time.Millisecond)
			due, _ := q.PopDue(now)
			for _, c := range due {
				if c.LocalAt.After(now) {
					t.Errorf("popped item %d due at %v at %v", c.Task.ID, c.LocalAt, now)
				}
				record(int64(c.Task.ID), "pop")
			}
			_ = q.Len()
		}
	})
	var wg sync.WaitGroup
	for p := range pushers {
		wg.Go(func() {
			var mine []*claim.Claim
			for i := range each {
				c := dqItem(int64(p*each+i), time.Duration(rand.IntN(2000))*time.Millisecond)
				q.Push(c)
				mine = append(mine, c)
				if i%3 == 0 {
					victim := mine[rand.IntN(len(mine))]
					if q.Remove(victim) {
						record(int64(victim.Task.ID), "remove")
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	popper.Wait()
	for _, c := range q.Drain() {
		record(int64(c.Task.ID), "drain")
	}
	if len(outcome) != pushers*each || dup.Load() != 0 {
		t.Fatalf("%d of %d items accounted for, %d duplicates", len(outcome), pushers*each, dup.Load())
	}
	n := map[string]int{}
	for _, how := range outcome {
		n[how]++
	}
	t.Logf("outcomes: %v", n)
}

// BenchmarkDelayQueueBurst queues a second's burst of claims at one fire
// time, as every-second crons make, and takes it: per claim.
func BenchmarkDelayQueueBurst(b *testing.B) {
	for _, n := range []int{100, 1667, 10000} {
		b.Run(fmt.Sprintf("claims=%d", n), func(b *testing.B) {
			items := make([]*claim.Claim, n)
			for i := range items {
				items[i] = dqItem(int64(i+1), time.Second)
			}
			q := NewDelayQueue()
			b.ResetTimer()
			for b.Loop() {
				for _, c := range items {
					q.Push(c)
				}
				if due, _ := q.PopDue(dqT0.Add(time.Second)); len(due) != n {
					b.Fatalf("popped %d of %d", len(due), n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/claim")
		})
	}
}

// testSpec is the task every test claim is of: the claims here are only
// queued and run, never planned.
var testSpec = &spec.Spec{Name: "t"}
