package easyjob

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// pauseFor pauses name, waits until it is parked, keeps it paused for d
// and resumes it; it returns when the pause began and ended.
func pauseFor(t *testing.T, c *Client, name string, d time.Duration) (from, to time.Time) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Pause(ctx, name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, name+" parked", func() bool {
		ti, err := c.Task(ctx, name)
		return err == nil && ti.Status == repository.TaskPaused
	})
	from = time.Now()
	time.Sleep(d) // a window, not a wait: the length of the outage is the scenario
	to = time.Now()
	if _, err := c.Resume(ctx, name); err != nil {
		t.Fatal(err)
	}
	return from, to
}

// waitBackOnCron waits until task ran two fires due after the pause that
// ended at to: then the late fires of the pause are all behind it.
func waitBackOnCron(t *testing.T, l *ledger, task string, to time.Time) {
	t.Helper()
	waitFor(t, 5*time.Second, task+" back on its cron", func() bool {
		k := 0
		for _, f := range l.snapshot() {
			if f.task == task && f.scheduled.After(to) {
				k++
			}
		}
		return k >= 2
	})
}

func policyCluster(t *testing.T, reg func(s *Scheduler)) (*Client, repository.Store, string) {
	t.Helper()
	store, group := pgStore(t)
	for range 2 {
		start(t, Config{Store: store, Group: group}, reg)
	}
	c, err := NewClient(context.Background(), Config{Store: store, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, store, group
}

func misfires(t *testing.T, c *Client, name string) map[string][]ExecutionInfo {
	t.Helper()
	h, err := c.History(context.Background(), name, HistoryFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]ExecutionInfo{}
	for _, e := range h {
		if e.Misfire != "" {
			out[e.Misfire] = append(out[e.Misfire], e)
		}
	}
	return out
}

// TestMisfireFireOnceNow: after a 3 s pause an every-second task runs its
// overdue fire once (recorded fire_once_now), then follows the cron.
func TestMisfireFireOnceNow(t *testing.T) {
	t.Parallel()
	var l ledger
	c, _, _ := policyCluster(t, func(s *Scheduler) {
		mustRegister(t, s, "x", "* * * * * *", l.job(nil), Misfire(FireOnceNow(), time.Second))
	})
	waitFor(t, 5*time.Second, "first fires", func() bool { return l.count("x") >= 2 })
	from, to := pauseFor(t, c, "x", 3*time.Second)
	waitFor(t, 5*time.Second, "the late fire recorded", func() bool {
		m := misfires(t, c, "x")["fire_once_now"]
		return len(m) == 1 && m[0].Status.Final()
	})
	waitBackOnCron(t, &l, "x", to)
	inPause := 0
	for _, f := range l.snapshot() {
		if f.scheduled.After(from.Add(time.Second)) && f.scheduled.Before(to) {
			inPause++
		}
	}
	if inPause > 1 {
		t.Errorf("%d fires of the paused seconds ran; fire-once-now runs one", inPause)
	}
	if m := misfires(t, c, "x"); len(m) != 1 || len(m["fire_once_now"]) != 1 {
		t.Errorf("misfire records %v, want exactly one fire_once_now", m)
	}
	if d := l.duplicates(); len(d) > 0 {
		t.Errorf("duplicates %v", d)
	}
}

// TestMisfireSkip: the overdue fire does not run; it is recorded skipped.
func TestMisfireSkip(t *testing.T) {
	t.Parallel()
	var l ledger
	c, _, _ := policyCluster(t, func(s *Scheduler) {
		mustRegister(t, s, "x", "* * * * * *", l.job(nil), Misfire(Skip(), time.Second))
	})
	waitFor(t, 5*time.Second, "first fires", func() bool { return l.count("x") >= 2 })
	from, to := pauseFor(t, c, "x", 3*time.Second)
	waitFor(t, 5*time.Second, "the skipped fire recorded", func() bool {
		m := misfires(t, c, "x")["skip"]
		return len(m) == 1 && m[0].Status.Final()
	})
	skipped := misfires(t, c, "x")["skip"][0]
	if skipped.Status != repository.ExecSkipped {
		t.Errorf("skipped fire recorded as %s", skipped.Status)
	}
	for _, f := range l.snapshot() {
		if f.scheduled.After(from.Add(time.Second)) && f.scheduled.Before(to) {
			t.Errorf("fire %s of the paused time ran despite Skip", f.scheduled.Format(time.TimeOnly))
		}
	}
	after := l.count("x")
	waitFor(t, 5*time.Second, "back on schedule", func() bool { return l.count("x") >= after+2 })
}

// TestMisfireCatchUp: after a 5 s pause, CatchUp(3) runs the newest 3
// fires of the outage one after another (older ones recorded skipped),
// then follows the cron.
func TestMisfireCatchUp(t *testing.T) {
	t.Parallel()
	var l ledger
	c, _, _ := policyCluster(t, func(s *Scheduler) {
		mustRegister(t, s, "x", "* * * * * *", l.job(nil), Misfire(CatchUp(3), time.Second))
	})
	waitFor(t, 5*time.Second, "first fires", func() bool { return l.count("x") >= 2 })
	before := l.count("x")
	from, to := pauseFor(t, c, "x", 5*time.Second)
	waitFor(t, 5*time.Second, "the catch-up recorded", func() bool { return len(misfires(t, c, "x")["catch_up"]) >= 3 })
	waitBackOnCron(t, &l, "x", to)
	var outage []time.Time
	for _, f := range l.snapshot()[before:] {
		if f.scheduled.After(from) && !f.scheduled.After(to) {
			outage = append(outage, f.scheduled)
		}
	}
	if len(outage) != 3 {
		t.Fatalf("%d fires of the outage %s..%s ran, want the newest 3: %v", len(outage),
			from.Format(time.TimeOnly), to.Format(time.TimeOnly), outage)
	}
	for i := 1; i < len(outage); i++ {
		if outage[i].Sub(outage[i-1]) != time.Second {
			t.Errorf("catch-up fires not consecutive: %v", outage)
		}
	}
	if d := l.duplicates(); len(d) > 0 {
		t.Errorf("duplicates %v", d)
	}
}

// TestRetryThenChildren: a fire that fails twice is retried with backoff
// (attempts visible in history, any node may run them); its child runs
// only after the final success.
func TestRetryThenChildren(t *testing.T) {
	t.Parallel()
	var l ledger
	var calls atomic.Int64
	c, _, _ := policyCluster(t, func(s *Scheduler) {
		mustRegister(t, s, "flaky", "0 0 0 1 1 *", func(ctx context.Context) error {
			l.record(ctx)
			if calls.Add(1) <= 2 {
				return errors.New("not yet")
			}
			return nil
		}, Retry(3, 50*time.Millisecond))
		mustRegister(t, s, "after", "", l.job(nil), Parent("flaky"))
	})
	if _, err := c.Trigger(context.Background(), "flaky"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the child after the third attempt, and the parent's run closed", func() bool {
		h, _ := c.History(context.Background(), "flaky", HistoryFilter{Status: repository.ExecSucceeded})
		return l.count("after") == 1 && len(h) == 1
	})
	h, err := c.History(context.Background(), "flaky", HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 3 {
		t.Fatalf("history has %d runs, want 3: %+v", len(h), h)
	}
	for i, e := range h { // newest first
		wantAttempt, wantStatus := 3-i, repository.ExecFailed
		if i == 0 {
			wantStatus = repository.ExecSucceeded
		}
		if e.Attempt != wantAttempt || e.Status != wantStatus {
			t.Errorf("run %d: attempt %d %s, want attempt %d %s", i, e.Attempt, e.Status, wantAttempt, wantStatus)
		}
	}
	var afterStart, lastFlaky time.Time
	for _, f := range l.snapshot() {
		switch f.task {
		case "after":
			afterStart = f.started
		case "flaky":
			lastFlaky = f.started
		}
	}
	if afterStart.Before(lastFlaky) {
		t.Error("the child ran before the parent's final attempt")
	}
}

// TestTimeoutRecorded: a run that hits its timeout is recorded timed_out
// and the task keeps firing.
func TestTimeoutRecorded(t *testing.T) {
	t.Parallel()
	c, _, _ := policyCluster(t, func(s *Scheduler) {
		mustRegister(t, s, "slow", "* * * * * *", func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}, Timeout(100*time.Millisecond))
	})
	waitFor(t, 6*time.Second, "two timed-out runs", func() bool {
		h, _ := c.History(context.Background(), "slow", HistoryFilter{Status: repository.ExecTimedOut})
		return len(h) >= 2
	})
}

// TestSkipInterrupted: with SkipInterrupted, the fire a crashed node was
// running is not re-run by the peer that recovers the task.
func TestSkipInterrupted(t *testing.T) {
	t.Parallel()
	store, group := pgStore(t)
	var l ledger
	running, cancelled, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	close(release)
	reg := func(s *Scheduler) {
		mustRegister(t, s, "once", "* * * * * *", blockOnce(&l, running, cancelled, release), SkipInterrupted())
	}
	cfg := Config{Store: store, Group: group, HeartbeatInterval: 300 * time.Millisecond, RecoverInterval: 300 * time.Millisecond}
	a := start(t, cfg, reg)
	b := start(t, cfg, reg)
	<-running
	victim := a
	if nodeOf(&l, "once") == int64(b.n.ID()) {
		victim = b
	}
	interrupted := l.snapshot()[0].scheduled
	victim.crash(t)
	waitFor(t, 5*time.Second, "the task fires again on the survivor", func() bool {
		for _, f := range l.snapshot() {
			if f.node != int64(victim.n.ID()) {
				return true
			}
		}
		return false
	})
	for _, f := range l.snapshot()[1:] {
		if f.scheduled.Equal(interrupted) {
			t.Fatalf("the interrupted fire %s ran again despite SkipInterrupted", interrupted.Format(time.TimeOnly))
		}
	}
}
