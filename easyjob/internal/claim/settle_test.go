package claim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/repository"
)

// self is the node the tests' claims belong to.
const self repository.NodeID = 7

// keepFinish is a finish that keeps the claim for a fire at 100 s.
var keepFinish = repository.Finish{Keep: true, Next: time.Unix(100, 0), NextAttempt: 1}

// finishing returns a claim of task id, held by s and Finishing, as its
// worker hands it to the completer.
func finishing(t *testing.T, s *Set, id repository.TaskID) *Claim {
	t.Helper()
	row := repository.Task{ID: id, Version: 1, NodeID: self, Status: repository.TaskDoing, NextStartTime: time.Unix(40, 0), Attempt: 1}
	c := New(row, &spec.Spec{Name: "t"}, time.Time{}, s.Epoch())
	s.Keep(c)
	if fired, _ := s.Fire([]*Claim{c}); len(fired) != 1 || !c.To(Finishing) {
		t.Fatalf("claim %v is not finishing", c)
	}
	return c
}

// keepIn is how a healthy node of s settles: its clock one second behind
// the database's.
func keepIn(s *Set) Keep {
	return Keep{
		Node: self, Epoch: s.Epoch(),
		ToLocal:  func(t time.Time) time.Time { return t.Add(-time.Second) },
		Stopping: func() bool { return false },
	}
}

// voidSuccessor returns the successor, not fired, of a claim of task id
// whose finish was then fenced: a void claim.
func voidSuccessor(t *testing.T, s *Set, id repository.TaskID) *Claim {
	t.Helper()
	p := finishing(t, s, id)
	x := p.Successor(keepFinish, time.Time{}, s.Epoch())
	if st := s.Settle(p, repository.FinishResult{Err: repository.ErrClaimLost}, keepIn(s)); st.Cancelled != nil || x == nil || !x.Void() {
		t.Fatalf("fenced finish: %+v, successor %v", st, x)
	}
	return x
}

// TestSettle drives Set.Settle through each way a finish ends its claim.
// Whatever waited for the claim runs once the set shows its end.
func TestSettle(t *testing.T) {
	predicted := func(c, succ *Claim) repository.FinishResult { return repository.FinishResult{Task: succ.Task} }
	kept := func(c, _ *Claim) repository.FinishResult {
		row := c.Task
		row.Version++
		row.NextStartTime = time.Unix(200, 0)
		return repository.FinishResult{Task: row}
	}
	lost := func(*Claim, *Claim) repository.FinishResult {
		return repository.FinishResult{Err: repository.ErrClaimLost}
	}
	type holder int
	const (
		none holder = iota
		successor
		queued
	)
	for _, tc := range []struct {
		name       string
		succ, fire bool // a successor was queued; and it fired
		silence    bool // the epoch moved during the write
		stopping   bool // the node began to stop
		unheld     bool // the claim was forgotten during the write
		row        func(c, succ *Claim) repository.FinishResult
		end        State
		holds      holder
		unheldRow  bool // Settled.Unheld
		cancelled  bool // the successor's job is cancelled
	}{
		{name: "fenced", succ: true, row: lost, end: Fenced},
		{name: "fenced, successor fired", succ: true, fire: true, row: lost, end: Fenced, cancelled: true},
		{name: "not written", succ: true, row: func(*Claim, *Claim) repository.FinishResult {
			return repository.FinishResult{Err: errors.New("connection reset")}
		}, end: Dropped},
		{name: "kept as predicted", succ: true, row: predicted, end: Kept, holds: successor},
		{name: "kept as predicted, successor fired", succ: true, fire: true, row: predicted, end: Kept, holds: successor},
		{name: "kept, not as predicted", succ: true, row: kept, end: Kept, holds: queued},
		{name: "kept, not as predicted, successor fired", succ: true, fire: true, row: kept, end: Kept, holds: queued, cancelled: true},
		{name: "kept, no successor", row: kept, end: Kept, holds: queued},
		{name: "kept across a silence", succ: true, silence: true, row: predicted, end: Released, unheldRow: true},
		{name: "kept across a silence, successor fired", succ: true, fire: true, silence: true, row: predicted, end: Kept, holds: successor},
		{name: "kept while stopping", row: kept, stopping: true, end: Released, unheldRow: true},
		{name: "kept, claim forgotten", succ: true, unheld: true, row: predicted, end: Released, unheldRow: true},
		{name: "released", succ: true, row: func(c, _ *Claim) repository.FinishResult {
			row := c.Task
			row.Version++
			row.Status, row.NodeID = repository.TaskPending, 0
			return repository.FinishResult{Task: row}
		}, end: Released},
		{name: "taken by a peer", row: func(c, _ *Claim) repository.FinishResult {
			row := c.Task
			row.Version++
			row.NodeID = self + 1
			return repository.FinishResult{Task: row}
		}, end: Released},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSet()
			c := finishing(t, s, 1)
			var succ *Claim
			jobCtx := context.Background()
			if tc.succ {
				succ = c.Successor(keepFinish, time.Time{}, s.Epoch())
				if tc.fire {
					if fired, _ := s.Fire([]*Claim{succ}); len(fired) != 1 {
						t.Fatal("the successor did not fire")
					}
					var cancel context.CancelCauseFunc
					jobCtx, cancel = context.WithCancelCause(context.Background())
					defer cancel(nil)
					succ.Run(cancel)
				}
			}
			k := keepIn(s)
			if tc.silence {
				s.VoidAll()
			}
			if tc.stopping {
				k.Stopping = func() bool { return true }
			}
			if tc.unheld {
				s.forget(c)
			}
			// What waited for the claim sees the set as settled.
			var sawHeld *Claim
			var sawVoid bool
			if !c.AfterSettle(func() {
				sawHeld, _ = s.Held(c.Task.ID)
				sawVoid = succ != nil && succ.Void()
			}) {
				t.Fatal("nothing may wait for a finishing claim")
			}
			res := tc.row(c, succ)
			st := s.Settle(c, res, k)

			if st.End != tc.end || c.State() != tc.end {
				t.Errorf("ended %s (claim %s), want %s", st.End, c.State(), tc.end)
			}
			if st.Unheld != tc.unheldRow {
				t.Errorf("Unheld = %v, want %v", st.Unheld, tc.unheldRow)
			}
			held, _ := s.Held(c.Task.ID)
			switch tc.holds {
			case none:
				if held != nil || st.Queue != nil {
					t.Errorf("held %v, queue %v: want neither", held, st.Queue)
				}
			case successor:
				if held != succ || st.Queue != nil || succ.Void() || succ.Pred() != nil {
					t.Errorf("held %v, queue %v: want the successor, confirmed", held, st.Queue)
				}
			case queued:
				q := st.Queue
				if q == nil || held != q || q.Task != res.Task || q.State() != Queued || q.Epoch != k.Epoch ||
					!q.LocalAt.Equal(res.Task.NextStartTime.Add(-time.Second)) {
					t.Fatalf("held %v, queue %v: want a new claim of the row, due at the local time of its fire", held, q)
				}
			}
			if succ != nil && tc.holds != successor && !succ.Void() {
				t.Error("a successor the row refused is not void")
			}
			if got := st.Cancelled != nil; got != tc.cancelled || got && st.Cancelled != succ {
				t.Errorf("Cancelled = %v, want the successor: %v", st.Cancelled, tc.cancelled)
			}
			if tc.fire && (jobCtx.Err() != nil) != tc.cancelled {
				t.Errorf("successor's job cancelled: %v, want %v", jobCtx.Err() != nil, tc.cancelled)
			}
			if sawHeld != held || succ != nil && sawVoid != succ.Void() {
				t.Errorf("a waiter saw held %v, successor void %v: before the set settled", sawHeld, sawVoid)
			}
		})
	}
}

// TestSettleOnlyFinishing: a claim that is not Finishing keeps its state
// (final ones included: a claim settles once), and what waits for it
// keeps waiting.
func TestSettleOnlyFinishing(t *testing.T) {
	for from := range numStates {
		if from == Finishing {
			continue
		}
		for _, res := range []repository.FinishResult{
			{Err: repository.ErrClaimLost},
			{Task: repository.Task{ID: 1, Version: 2, NodeID: self, Status: repository.TaskDoing}},
			{Task: repository.Task{ID: 1, Version: 2, Status: repository.TaskPending}},
		} {
			s := NewSet()
			c := claimIn(t, from)
			s.Keep(c)
			ran := false
			c.AfterSettle(func() { ran = true })
			st := s.Settle(c, res, keepIn(s))
			if c.State() != from || ran {
				t.Errorf("Settle from %s (to %s): claim now %s, waiter ran %v", from, st.End, c.State(), ran)
			}
		}
	}
}

// TestSettleSuccessorOfAnotherEpoch: a successor taken in an epoch other
// than its predecessor's finish does not hold the row even when it
// predicted it: a new claim does, in the finish's epoch.
func TestSettleSuccessorOfAnotherEpoch(t *testing.T) {
	s := NewSet()
	c := finishing(t, s, 1)
	succ := c.Successor(keepFinish, time.Time{}, s.Epoch())
	succ.Epoch--
	st := s.Settle(c, repository.FinishResult{Task: succ.Task}, keepIn(s))
	if st.End != Kept || st.Queue == nil || st.Queue == succ || st.Queue.Epoch != s.Epoch() || !succ.Void() {
		t.Fatalf("settle: %+v, successor void %v", st, succ.Void())
	}
}
