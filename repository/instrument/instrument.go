// Package instrument puts hooks in front of a store: every call of the
// runtime's contract and of the control contract goes through one
// wrapper, which tells each Hook when the call begins and how it ended,
// and bounds it in time when a hook is a Bounder. Metrics and traces
// (easyjob's Observer), the health probe, the call deadlines and the
// bench harness's round-trip counts are hooks; none of them forwards the
// store by hand.
package instrument

import (
	"context"
	"errors"
	"fmt"
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
	// Release: claims, StartExecutions, Finish, RecoverAll: requests,
	// CreateSchedules: definitions), 0 for the others; Won is how many it
	// got (claims won, rows released, starts and finishes whose row has no
	// error: not fenced, recoveries applied, schedules created).
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

// Bounder is a Hook that bounds calls in time: the wrapper runs each call
// under a context that ends Bound(op) after the call begins, unless the
// caller's ends sooner (0: no bound of its own). A database path that
// goes silent (packets dropped, sockets open) then costs a call its
// bound, not the caller its goroutine: the driver gives up the read and
// discards the connection. Listen, one long session, is never bounded.
type Bounder interface {
	Hook
	Bound(op string) time.Duration
}

// Deadlines is a Bounder from a function of the method's name.
type Deadlines func(op string) time.Duration

// Begin implements Hook.
func (Deadlines) Begin(string, time.Time) {}

// End implements Hook.
func (Deadlines) End(Call) {}

// Bound implements Bounder.
func (d Deadlines) Bound(op string) time.Duration { return d(op) }

// Wrap returns s with hooks in front of every method but Close, the
// first Bounder among them bounding every call. The result implements
// repository.Notifier exactly when s does (Listen is reported once, when
// its session ends). With no hooks it returns s.
func Wrap(s repository.Store, hooks ...Hook) repository.Store {
	if len(hooks) == 0 {
		return s
	}
	w := &store{inner: s, hooks: hooks}
	for _, h := range hooks {
		if b, ok := h.(Bounder); ok {
			w.bound = b
			break
		}
	}
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
	bound Bounder // nil: calls keep their caller's context
}

// begin reports op's start to the hooks and returns the context the call
// runs under, its start, and the release of that context.
func (s *store) begin(ctx context.Context, op string) (context.Context, time.Time, context.CancelFunc) {
	at := s.announce(op)
	if s.bound == nil {
		return ctx, at, func() {}
	}
	d := s.bound.Bound(op)
	if d <= 0 {
		return ctx, at, func() {}
	}
	if dl, ok := ctx.Deadline(); ok && dl.Before(at.Add(d)) {
		return ctx, at, func() {}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, d, &TimeoutError{Op: op, After: d})
	return ctx, at, cancel
}

// announce tells the hooks that op begins now.
func (s *store) announce(op string) time.Time {
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

// call runs f as op, timed and bounded.
func call[T any](ctx context.Context, s *store, op string, f func(context.Context) (T, error)) (T, error) {
	ctx, began, cancel := s.begin(ctx, op)
	defer cancel()
	v, err := f(ctx)
	err = bounded(ctx, err)
	s.end(Call{Op: op, Began: began, Err: err})
	return v, err
}

// TimeoutError reports a store call that its Bounder's bound ended. It
// matches context.DeadlineExceeded.
type TimeoutError struct {
	Op    string
	After time.Duration
}

// Error names the call and its bound.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s gave up after %v: the database did not answer", e.Op, e.After)
}

// Unwrap makes the error match context.DeadlineExceeded.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// bounded names the bound in err when the call's own deadline ended it.
func bounded(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var te *TimeoutError
	if errors.As(context.Cause(ctx), &te) && !errors.As(err, &te) {
		return fmt.Errorf("%w: %w", te, err)
	}
	return err
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
	began := s.announce("Listen")
	err := s.n.Listen(ctx, group, wake)
	s.end(Call{Op: "Listen", Began: began, Err: err})
	return err
}
