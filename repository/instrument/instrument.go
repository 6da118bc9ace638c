// Package instrument puts hooks in front of a store: every call of the
// runtime's contract and of the control contract goes through one
// wrapper, which tells each Hook when the call begins and how it ended.
// Metrics and traces (easyjob's Observer), the health probe and the bench
// harness's round-trip counts are hooks; none of them forwards the store
// by hand.
package instrument

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Call is one store call as a Hook sees it when it ends.
type Call struct {
	Op    string // the method's name, e.g. "Finish"
	Began time.Time
	Took  time.Duration
	Err   error
	// Rows is how many rows a batched call asked for (Claim: refs,
	// Release: claims, StartExecutions, Finish, RecoverAll: requests), 0
	// for the others; Won is how many it got (claims won, rows released,
	// starts and finishes whose row has no error: not fenced, recoveries
	// applied).
	Rows, Won int
	// Node is the node row a RegisterNode or Heartbeat wrote.
	Node repository.NodeID
}

// Hook sees store calls. Begin is called as a call begins, End as it
// ends; both run on the caller's goroutine and must not block.
type Hook interface {
	Begin(op string, at time.Time)
	End(c Call)
}

// Wrap returns s with hooks in front of every method but Close. The
// result implements repository.Notifier exactly when s does (Listen is
// reported once, when its session ends). With no hooks it returns s.
func Wrap(s repository.Store, hooks ...Hook) repository.Store {
	if len(hooks) == 0 {
		return s
	}
	w := &store{inner: s, hooks: hooks}
	if n, ok := s.(repository.Notifier); ok {
		return &notifier{store: w, n: n}
	}
	return w
}

// store is the one wrapper: each method of repository.Store, once
// (runtime.go, control.go).
type store struct {
	inner repository.Store
	hooks []Hook
}

func (s *store) begin(op string) time.Time {
	at := time.Now()
	for _, h := range s.hooks {
		h.Begin(op, at)
	}
	return at
}

func (s *store) end(c Call) {
	c.Took = time.Since(c.Began)
	for _, h := range s.hooks {
		h.End(c)
	}
}

// call times f as op.
func call[T any](s *store, op string, f func() (T, error)) (T, error) {
	began := s.begin(op)
	v, err := f()
	s.end(Call{Op: op, Began: began, Err: err})
	return v, err
}

// Close closes the inner store; it is not a call worth reporting.
func (s *store) Close() error { return s.inner.Close() }

// notifier is a wrapped store that keeps its inner store's LISTEN/NOTIFY.
type notifier struct {
	*store
	n repository.Notifier
}

// Listen implements repository.Notifier.
func (s *notifier) Listen(ctx context.Context, group string, wake func()) error {
	began := s.begin("Listen")
	err := s.n.Listen(ctx, group, wake)
	s.end(Call{Op: "Listen", Began: began, Err: err})
	return err
}
