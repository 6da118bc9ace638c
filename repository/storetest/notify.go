package storetest

import (
	"context"
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var notifyCases = []testCase{
	{"Listen", testListen},
}

// listening is one Listen call in its own goroutine.
type listening struct {
	wakes  chan struct{}
	cancel context.CancelFunc
	done   chan error
}

func (e *env) listen(n repository.Notifier, group string) *listening {
	ctx, cancel := context.WithCancel(e.ctx)
	l := &listening{wakes: make(chan struct{}, 1000), cancel: cancel, done: make(chan error, 1)}
	go func() {
		l.done <- n.Listen(ctx, group, func() {
			select {
			case l.wakes <- struct{}{}:
			default:
			}
		})
	}()
	e.t.Cleanup(func() { l.stop(e) })
	return l
}

// stop cancels the Listen call and waits for it to return nil.
func (l *listening) stop(e *env) {
	e.t.Helper()
	if l.cancel == nil {
		return
	}
	l.cancel()
	l.cancel = nil
	select {
	case err := <-l.done:
		if err != nil {
			e.t.Errorf("Listen returned %v after its context ended, want nil", err)
		}
	case <-time.After(5 * time.Second):
		e.t.Errorf("Listen did not return within 5s of its context ending")
	}
}

// drain swallows wakes until none came for a short while.
func (l *listening) drain() int {
	n := 0
	for {
		select {
		case <-l.wakes:
			n++
		case <-time.After(50 * time.Millisecond):
			return n
		}
	}
}

func (l *listening) woken(within time.Duration) bool {
	select {
	case <-l.wakes:
		return true
	case <-time.After(within):
		return false
	}
}

// ready triggers name in group until the listener wakes: then Listen is
// surely subscribed. A Listen that returns ErrNotifyUnavailable meanwhile
// found out it cannot listen (a transaction pooler it was not told of):
// the test is skipped, as the nodes then poll.
func (e *env) ready(l *listening, group, name string) {
	e.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if _, err := e.s.Trigger(e.ctx, group, name, ""); err != nil {
			e.t.Fatal(err)
		}
		if l.woken(50 * time.Millisecond) {
			l.drain()
			return
		}
		select {
		case err := <-l.done:
			l.cancel()
			l.cancel = nil
			if errors.Is(err, repository.ErrNotifyUnavailable) {
				e.t.Skip("store found it cannot listen here (transaction pooler): nodes poll")
			}
			e.t.Fatalf("Listen(%q) returned %v before its context ended", group, err)
		default:
		}
	}
	e.t.Fatalf("Listen(%q) never woke on Trigger", group)
}

// Listen wakes the group's listeners on registration changes, Release,
// Recover, Resume, Trigger and a handed-off Finish, not on a plain Finish
// nor other groups' listeners, and returns
// nil when its context ends.
func testListen(e *env) {
	n, ok := e.s.(repository.Notifier)
	if !ok {
		e.t.Skip("store does not implement repository.Notifier")
	}
	done, cancel := context.WithCancel(e.ctx)
	cancel()
	if err := n.Listen(done, e.g, func() {}); errors.Is(err, repository.ErrNotifyUnavailable) {
		e.t.Skip("store cannot listen here (transaction pooler): nodes poll")
	}
	e.pending("beacon")
	e.upsertIn(e.other(), def("beacon", e.now()))
	mine := e.listen(n, e.g)
	e.ready(mine, e.g, "beacon")
	theirs := e.listen(n, e.other())
	e.ready(theirs, e.other(), "beacon")

	node := e.node("n")
	steps := []struct {
		what string
		act  func()
	}{
		{"UpsertTasks inserting", func() { e.pending("job") }},
		{"UpsertTasks changing a cron", func() {
			d := def("job", e.now())
			d.Cron = cronB
			e.upsert(d)
		}},
		{"Release", func() {
			t := e.claim(node.ID, e.task("job"))[0]
			mine.drain()
			if r, err := e.s.Release(e.ctx, []repository.Claim{t.Claim()}); err != nil || r != 1 {
				e.t.Fatalf("Release = %d, %v", r, err)
			}
		}},
		{"Recover", func() {
			t := e.claim(node.ID, e.task("job"))[0]
			mine.drain()
			if err := e.recover(repository.Recovery{Ref: t.Ref(), DeadNode: node.ID}); err != nil {
				e.t.Fatal(err)
			}
		}},
		{"Resume", func() {
			e.do("Pause", e.s.Pause, "job")
			mine.drain()
			e.do("Resume", e.s.Resume, "job")
		}},
		{"Trigger", func() { e.do("Trigger", e.triggerOp, "job") }},
		{"Finish handing the claim off", func() {
			t := e.claim(node.ID, e.task("job"))[0]
			mine.drain()
			e.finishHeld(repository.Finish{Claim: t.Claim(), Revision: t.Revision, Status: repository.ExecSucceeded,
				Next: e.now().Add(time.Second), Cron: t.Cron, Handoff: true})
		}},
	}
	for _, st := range steps {
		mine.drain()
		st.act()
		if !mine.woken(2 * time.Second) {
			e.t.Errorf("%s did not wake the group's listener", st.what)
		}
	}
	// A plain finish (no hand-off) wakes nobody: every fire would
	// otherwise wake every node's loader.
	t := e.claim(node.ID, e.task("job"))[0]
	mine.drain()
	e.finishHeld(repository.Finish{Claim: t.Claim(), Revision: t.Revision, Status: repository.ExecSucceeded,
		Next: e.now().Add(time.Hour), Cron: t.Cron})
	if mine.woken(300 * time.Millisecond) {
		e.t.Errorf("a Finish without Handoff woke the group's listener")
	}
	if k := theirs.drain(); k != 0 {
		e.t.Errorf("another group's listener woke %d times", k)
	}
	mine.stop(e)
	theirs.stop(e)
}
