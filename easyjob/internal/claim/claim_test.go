package claim

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/repository"
)

// path leads a new claim to each state through legal steps.
var path = map[State][]State{
	Queued:    nil,
	Fired:     {Fired},
	Finishing: {Fired, Finishing},
	Kept:      {Fired, Finishing, Kept},
	Released:  {Fired, Finishing, Released},
	Fenced:    {Fired, Finishing, Fenced},
	Dropped:   {Dropped},
}

// want is the table of State's doc comment, written out again: a change
// of the table must change both.
var want = map[[2]State]bool{
	{Queued, Fired}: true, {Queued, Dropped}: true,
	{Fired, Finishing}: true, {Fired, Dropped}: true,
	{Finishing, Kept}: true, {Finishing, Released}: true, {Finishing, Fenced}: true, {Finishing, Dropped}: true,
}

func claimIn(t *testing.T, s State) *Claim {
	t.Helper()
	c := New(repository.Task{ID: 1, Version: 1}, &spec.Spec{Name: "t"}, time.Time{}, 0)
	for _, step := range path[s] {
		if !c.To(step) {
			t.Fatalf("reaching %s: step to %s refused from %s", s, step, c.State())
		}
	}
	if c.State() != s {
		t.Fatalf("claim in %s, want %s", c.State(), s)
	}
	return c
}

// TestEveryTransition drives each pair of states, legal and illegal: a
// legal step moves the claim, an illegal one leaves it where it was.
func TestEveryTransition(t *testing.T) {
	for from := range numStates {
		for to := range numStates {
			c := claimIn(t, from)
			ok := c.To(to)
			if ok != want[[2]State{from, to}] || ok != Legal(from, to) {
				t.Errorf("%s -> %s: To = %v, Legal = %v, want %v", from, to, ok, Legal(from, to), want[[2]State{from, to}])
			}
			if got := c.State(); ok && got != to || !ok && got != from {
				t.Errorf("%s -> %s (allowed %v): claim now %s", from, to, ok, got)
			}
		}
	}
	if Legal(numStates, Queued) || Legal(Queued, numStates) {
		t.Error("a state out of range is legal")
	}
}

func TestFinalStates(t *testing.T) {
	for s := range numStates {
		final := s == Kept || s == Released || s == Fenced || s == Dropped
		if s.Final() != final {
			t.Errorf("%s.Final() = %v", s, s.Final())
		}
		if s.String() == "" {
			t.Errorf("state %d has no name", s)
		}
	}
}

// TestSettleOnlyFromFinishing: Settle ends a finishing claim in a final
// state once, runs its waiters then, and refuses every other case.
func TestSettleOnlyFromFinishing(t *testing.T) {
	for from := range numStates {
		for to := range numStates {
			c := claimIn(t, from)
			ran := false
			waited := c.AfterSettle(func() { ran = true })
			if waited == from.Final() {
				t.Errorf("%s: AfterSettle waited = %v", from, waited)
			}
			ok := c.settle(to)
			if want := from == Finishing && to.Final(); ok != want {
				t.Errorf("Settle(%s) from %s = %v, want %v", to, from, ok, want)
			}
			if ok != (ran && waited) && waited {
				t.Errorf("Settle(%s) from %s: waiter ran = %v, settled = %v", to, from, ran, ok)
			}
		}
	}
}

// TestFireOnce: a claim fires once; a dropped, void or stale one never.
func TestFireOnce(t *testing.T) {
	s := NewSet()
	c := claimIn(t, Queued)
	s.Keep(c)
	if fired, not := s.Fire([]*Claim{c}); len(fired) != 1 || len(not) != 0 {
		t.Fatalf("first fire: fired %v, not %v", fired, not)
	}
	if fired, _ := s.Fire([]*Claim{c}); len(fired) != 0 {
		t.Fatal("a claim fired twice")
	}
	dropped := New(repository.Task{ID: 2}, c.Spec, time.Time{}, 0)
	s.Keep(dropped)
	s.Drop(dropped)
	void := voidSuccessor(t, s, 3)
	stale := New(repository.Task{ID: 4}, c.Spec, time.Time{}, s.Epoch())
	s.Keep(stale)
	s.VoidAll()
	for _, x := range []*Claim{dropped, void, stale} {
		if fired, _ := s.Fire([]*Claim{x}); len(fired) != 0 {
			t.Errorf("%s fired", x)
		}
	}
	if dropped.State() != Dropped {
		t.Errorf("a dropped queued claim is %s", dropped.State())
	}
}

// TestSuccessorConfirmedOrVoid: a successor fires while its predecessor
// is held; the predecessor's settle releases its waiters and the link;
// a void successor's writes are fenced.
func TestSuccessorConfirmedOrVoid(t *testing.T) {
	s := NewSet()
	c := finishing(t, s, 1)
	next := c.Successor(repository.Finish{Keep: true, Next: time.Unix(100, 0), NextAttempt: 1}, time.Unix(100, 0), s.Epoch())
	if next == nil || next.Pred() != c || c.queued() != next {
		t.Fatalf("successor %v of %v", next, c)
	}
	if next.Task.Version != c.Task.Version+1 || next.Task.Status != repository.TaskDoing {
		t.Fatalf("successor row %+v", next.Task)
	}
	if !s.Valid(next) {
		t.Fatal("a successor of the held claim may not fire")
	}
	if again := next.Successor(repository.Finish{Keep: true}, time.Time{}, s.Epoch()); again != nil {
		t.Fatal("an unconfirmed successor got a successor of its own")
	}
	var waited atomic.Bool
	next.Pred().AfterSettle(func() { waited.Store(true) })
	if st := s.Settle(c, repository.FinishResult{Task: next.Task}, keepIn(s)); st.End != Kept || st.Queue != nil || c.State() != Kept {
		t.Fatalf("settle of a predicted row: %+v, claim %s", st, c.State())
	}
	if !waited.Load() || next.Pred() != nil {
		t.Fatal("settle did not run the waiter or keep the link")
	}
	if h, _ := s.Held(c.Task.ID); h != next {
		t.Fatal("the successor is not held")
	}
	void := voidSuccessor(t, s, 2)
	if void.Fence().Version != voidVersion || s.Valid(void) {
		t.Fatal("a void successor keeps its fence or may fire")
	}
}

// TestRunCancelledWhenVoidOrStartFailed: a job starting on a void claim,
// or after its start record failed, gets a cancelled context.
func TestRunCancelledWhenVoidOrStartFailed(t *testing.T) {
	c := claimIn(t, Fired)
	c.SetStarted(repository.Execution{}, repository.ErrClaimLost)
	ctx, cancel := context.WithCancelCause(context.Background())
	c.Run(cancel)
	if ctx.Err() == nil || !c.StartFailed() {
		t.Fatal("a run whose start failed is not cancelled")
	}
	if _, appendRun, err := c.Recorded(nil, nil); appendRun || err == nil {
		t.Fatal("Recorded after a failed start: want its error")
	}
	// Voided after the boss fired it, before its job got a worker.
	s := NewSet()
	p := finishing(t, s, 2)
	d := p.Successor(repository.Finish{Keep: true, Next: time.Unix(100, 0), NextAttempt: 1}, time.Time{}, s.Epoch())
	if fired, _ := s.Fire([]*Claim{d}); len(fired) != 1 {
		t.Fatal("the successor did not fire")
	}
	if st := s.Settle(p, repository.FinishResult{Err: repository.ErrClaimLost}, keepIn(s)); st.Cancelled != d || !d.Void() {
		t.Fatalf("a fired successor of a fenced finish: %+v", st)
	}
	ctx, cancel = context.WithCancelCause(context.Background())
	d.Run(cancel)
	if ctx.Err() == nil {
		t.Fatal("a void claim's run is not cancelled")
	}
	e := claimIn(t, Fired)
	if _, appendRun, _ := e.Recorded(nil, nil); !appendRun || e.AskRecord() {
		t.Fatal("a finish before any start record must append the run, and no record be asked after")
	}
}

// TestConcurrentFireDropVoid races the boss's fire, a silence's drop and
// a settle's void on many successors: each ends fired or not, never both;
// a fired one is never in Dropped from the drop; and a settle that voids
// a successor reports it cancelled whenever it had fired (Fire and Settle
// take the set's lock, so it never fires after).
func TestConcurrentFireDropVoid(t *testing.T) {
	const n = 2000
	s := NewSet()
	ps := make([]*Claim, n)
	cs := make([]*Claim, n)
	for i := range cs {
		ps[i] = finishing(t, s, repository.TaskID(i+1))
		cs[i] = ps[i].Successor(repository.Finish{Keep: true, Next: time.Unix(100, 0), NextAttempt: 1}, time.Time{}, s.Epoch())
	}
	var fired, cancelled [n]atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range cs {
			if f, _ := s.Fire([]*Claim{cs[i]}); len(f) == 1 {
				fired[i].Store(true)
			}
		}
	})
	wg.Go(func() {
		for i := len(cs) - 1; i >= 0; i -= 2 {
			s.Drop(cs[i])
		}
	})
	wg.Go(func() {
		for i := 0; i < len(cs); i += 3 {
			if st := s.Settle(ps[i], repository.FinishResult{Err: repository.ErrClaimLost}, keepIn(s)); st.Cancelled != nil {
				cancelled[i].Store(true)
			}
		}
	})
	wg.Wait()
	for i, c := range cs {
		st := c.State()
		switch {
		case fired[i].Load() && st != Fired && st != Dropped:
			t.Fatalf("claim %d fired, now %s", i, st)
		case !fired[i].Load() && st == Fired:
			t.Fatalf("claim %d in Fired without firing", i)
		case i%3 != 0:
		case fired[i].Load() && !cancelled[i].Load():
			t.Fatalf("claim %d fired, and its voiding did not cancel it", i)
		case cancelled[i].Load() && !fired[i].Load() && st != Dropped:
			t.Fatalf("claim %d cancelled without firing or being dropped, now %s", i, st)
		}
	}
}
