package easyjob

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// runsOf returns the finished runs of task, oldest first.
func runsOf(t *testing.T, c *Client, task string) []ExecutionInfo {
	t.Helper()
	xs, err := c.History(context.Background(), task, HistoryFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []ExecutionInfo
	for _, x := range xs {
		if x.Status != repository.ExecRunning {
			out = append(out, x)
		}
	}
	slices.Reverse(out)
	return out
}

// overlapCluster runs task "slow" (every second; each run lasts 1.6 s,
// ending early when its context ends unless ignore) with policy p on two
// nodes, and returns a client once it has at least runs finished runs.
func overlapCluster(t *testing.T, newStore func(*testing.T) (repository.Store, string), p OverlapPolicy, ignore bool, runs int, opts ...Option) *Client {
	t.Helper()
	job := func(ctx context.Context) error {
		select {
		case <-time.After(1600 * time.Millisecond):
			return nil
		case <-ctx.Done():
			if ignore {
				time.Sleep(1600 * time.Millisecond)
				return nil
			}
			return ctx.Err()
		}
	}
	c := pairOf(t, newStore, "slow", "* * * * * *", job, append(opts, Overlap(p))...)
	waitFor(t, 30*time.Second, "the runs", func() bool { return len(runsOf(t, c, "slow")) >= runs })
	return c
}

// clusterClient returns a client of group once n nodes are live.
func clusterClient(t *testing.T, store repository.Store, group string, n int) *Client {
	t.Helper()
	ctx := context.Background()
	c, err := NewClient(ctx, Config{Store: store, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the nodes to be live", func() bool {
		ns, _ := c.Nodes(ctx)
		live := 0
		for _, x := range ns {
			if x.Live {
				live++
			}
		}
		return live == n
	})
	return c
}

// pairOf starts two nodes of a new group on tc's store, each registering
// task name, and returns a client once both are live.
func pairOf(t *testing.T, newStore func(*testing.T) (repository.Store, string), name, cron string, job Func, opts ...Option) *Client {
	t.Helper()
	store, group := newStore(t)
	for range 2 {
		start(t, fastConfig(store, group), func(s *Scheduler) {
			if err := s.Register(name, cron, job, opts...); err != nil {
				t.Fatal(err)
			}
		})
	}
	return clusterClient(t, store, group, 2)
}

// noConcurrentRuns fails when two runs of one task overlapped in time, on
// whichever nodes they ran.
func noConcurrentRuns(t *testing.T, xs []ExecutionInfo) {
	t.Helper()
	for i := 1; i < len(xs); i++ {
		if xs[i].StartedAt.Before(xs[i-1].FinishedAt.Add(-10 * time.Millisecond)) {
			t.Errorf("run %d (fire %s, node %d) started at %s before run %d (node %d) finished at %s",
				i, xs[i].ScheduledAt.Format(time.RFC3339), xs[i].NodeID, xs[i].StartedAt.Format(time.RFC3339Nano),
				i-1, xs[i-1].NodeID, xs[i-1].FinishedAt.Format(time.RFC3339Nano))
		}
	}
}

// overlapCase is one policy's test: the runs it waits for, and what each
// pair of runs (the previous one and the next) must show.
type overlapCase struct {
	policy OverlapPolicy
	ignore bool // the job ignores its context
	opts   []Option
	// pair checks run i (x) against run i-1 (prev); "" when they agree.
	pair func(prev, x ExecutionInfo) string
	// concurrent: runs may overlap (a terminated job left running).
	concurrent bool
}

var overlapCases = []overlapCase{
	{policy: OverlapSkip, pair: func(prev, x ExecutionInfo) string {
		if !x.ScheduledAt.After(prev.FinishedAt.Add(-10*time.Millisecond)) || x.Kind != RunCron {
			return "was due while the previous run ran: skip drops it"
		}
		return ""
	}},
	{policy: OverlapBufferOne, pair: func(prev, x ExecutionInfo) string {
		switch {
		case x.Kind != RunBuffered || x.Misfire != "":
			return "is not buffered, or a misfire policy applied"
		case !x.ScheduledAt.Before(prev.FinishedAt) || x.StartedAt.Sub(prev.FinishedAt) > time.Second:
			return "is not the fire buffered behind the previous run"
		case !x.ScheduledAt.After(prev.StartedAt.Add(-time.Second)):
			return "was due before the previous run started: buffer one keeps only the first due during a run"
		}
		return ""
	}},
	{policy: OverlapBufferAll, pair: func(prev, x ExecutionInfo) string {
		if x.ScheduledAt.Sub(prev.ScheduledAt) != time.Second || x.Kind != RunBuffered {
			return "is not the next second's fire, buffered: buffer all runs every fire"
		}
		return ""
	}},
	{policy: OverlapCancel, pair: func(prev, x ExecutionInfo) string {
		switch {
		case prev.Status != repository.ExecCancelled || !strings.Contains(prev.Error, "overlap policy cancel"):
			return "follows a run not cancelled by the overlap policy: " + string(prev.Status) + " " + prev.Error
		case prev.Duration() > 1500*time.Millisecond:
			return "follows a run the next fire (a second later) did not cancel"
		case x.Kind != RunBuffered || !x.ScheduledAt.Equal(prev.ScheduledAt.Add(time.Second)):
			return "is not the buffered fire that cancelled the previous run"
		}
		return ""
	}},
	{policy: OverlapTerminate, ignore: true, opts: []Option{OverlapGrace(200 * time.Millisecond)}, concurrent: true,
		pair: func(prev, x ExecutionInfo) string {
			switch {
			case prev.Status != repository.ExecCancelled || !strings.Contains(prev.Error, "terminated"):
				return "follows a run not terminated: " + string(prev.Status) + " " + prev.Error
			case prev.Duration() > 1500*time.Millisecond:
				return "follows a run that held its worker past the next fire and the grace"
			}
			return ""
		}},
}

// TestOverlapPolicies runs each policy on two nodes, a task on every
// second whose runs last 1.6 s, and checks each pair of runs.
func TestOverlapPolicies(t *testing.T) {
	t.Parallel() // each in its own group; the jobs mostly sleep
	for _, oc := range overlapCases {
		for _, tc := range bothStores {
			t.Run(string(oc.policy)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				xs := runsOf(t, overlapCluster(t, tc.store, oc.policy, oc.ignore, 3, oc.opts...), "slow")
				if !oc.concurrent {
					noConcurrentRuns(t, xs)
				}
				for i := 1; i < len(xs); i++ {
					if why := oc.pair(xs[i-1], xs[i]); why != "" {
						t.Errorf("run %d (fire %s, kind %s, node %d, %s..%s) %s", i, xs[i].ScheduledAt.Format(time.RFC3339), xs[i].Kind,
							xs[i].NodeID, xs[i].StartedAt.Format("15:04:05.000"), xs[i].FinishedAt.Format("15:04:05.000"), why)
					}
				}
			})
		}
	}
}

// TestMaxFires: a task runs its MaxFires fires, then is finished.
func TestMaxFires(t *testing.T) {
	t.Parallel() // each in its own group; the jobs mostly sleep
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var l ledger
			c := pairOf(t, tc.store, "thrice", "* * * * * *", l.job(nil), MaxFires(3))
			waitFor(t, 15*time.Second, "the task finished", func() bool {
				ti, err := c.Task(ctx, "thrice")
				return err == nil && ti.Status == repository.TaskFinished
			})
			ti, _ := c.Task(ctx, "thrice")
			if n := l.count("thrice"); n != 3 || ti.Fires != 3 {
				t.Errorf("ran %d times, %d fires counted; want 3 and 3", n, ti.Fires)
			}
			if err := MaxFires(0)(&taskSpec{}); err == nil {
				t.Error("MaxFires(0) accepted")
			}
		})
	}
}

// TestBackfill: a backfill of the last 10 s runs each of its fires once,
// one after another, with its nominal time and kind backfill, while the
// task's own fires go on; a second backfill waits for the first.
func TestBackfill(t *testing.T) {
	t.Parallel()
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var l ledger
			c := pairOf(t, tc.store, "every2", "*/2 * * * * *", l.job(nil))
			now, err := c.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			from, to := now.Add(-10*time.Second), now.Add(-time.Second)
			fires, err := c.Backfill(ctx, "every2", from, to)
			if err != nil {
				t.Fatal(err)
			}
			if len(fires) < 4 || len(fires) > 5 {
				t.Fatalf("backfill of %s..%s asked for %d fires, want the 4 or 5 even seconds", from, to, len(fires))
			}
			if _, err := c.Backfill(ctx, "every2", from, to); !errors.Is(err, ErrBackfillInProgress) {
				t.Errorf("a second backfill while the first runs: %v, want ErrBackfillInProgress", err)
			}
			waitFor(t, 15*time.Second, "the backfill to end", func() bool {
				ti, err := c.Task(ctx, "every2")
				return err == nil && ti.BackfillNext.IsZero()
			})
			xs, err := c.History(ctx, "every2", HistoryFilter{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			var got []time.Time
			for _, x := range xs {
				if x.Kind == RunBackfill {
					got = append(got, x.ScheduledAt)
					if x.Status != repository.ExecSucceeded {
						t.Errorf("backfill run of %s: %s", x.ScheduledAt, x.Status)
					}
				}
			}
			slices.SortFunc(got, time.Time.Compare)
			if !slices.EqualFunc(got, fires, time.Time.Equal) {
				t.Errorf("backfill runs at %v, want one per fire asked for: %v", got, fires)
			}
			if d := l.duplicates(); len(d) > 0 {
				t.Errorf("fires run twice: %v", d)
			}
			if ti, _ := c.Task(ctx, "every2"); ti.NextStartTime.Before(now) {
				t.Errorf("the task's own next fire %s is before the backfill began (%s): it should have gone on", ti.NextStartTime, now)
			}
			// Refusals, nothing written.
			for _, r := range [][2]time.Time{{to, from}, {now.Add(time.Hour), now.Add(2 * time.Hour)}, {now.Add(-30 * 24 * time.Hour), now}} {
				if _, err := c.Backfill(ctx, "every2", r[0], r[1]); !errors.Is(err, ErrInvalidBackfill) {
					t.Errorf("backfill %s..%s: %v, want ErrInvalidBackfill", r[0], r[1], err)
				}
			}
		})
	}
}

// TestBackfillChain: a backfill of a chain's root runs the whole chain
// for each fire of the range, even for fires that ran at their time (a
// backfill is not a resume of them).
func TestBackfillChain(t *testing.T) {
	t.Parallel()
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, group := tc.store(t)
			var l ledger
			start(t, fastConfig(store, group), func(s *Scheduler) {
				if err := s.Register("root", "*/2 * * * * *", l.job(nil)); err != nil {
					t.Fatal(err)
				}
				if err := s.Register("step", "", l.job(nil), Parent("root")); err != nil {
					t.Fatal(err)
				}
			})
			c := liveClient(t, store, group)
			waitFor(t, 10*time.Second, "three fires of the chain", func() bool { return l.count("step") >= 3 })
			now, err := c.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fires, err := c.Backfill(ctx, "root", now.Add(-6*time.Second), now)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if t.Failed() {
					for _, name := range []string{"root", "step"} {
						xs, _ := c.History(ctx, name, HistoryFilter{Limit: 1000})
						for _, x := range xs {
							t.Logf("%s %s %s %s parent=%d", name, x.ScheduledAt.Format("15:04:05"), x.Kind, x.Status, x.ParentExecutionID)
						}
					}
					t.Logf("fires %v now %s", fires, now)
					ti, _ := c.Task(ctx, "root")
					t.Logf("root %+v", ti)
				}
			}()
			waitFor(t, 15*time.Second, "the backfill's chains", func() bool {
				xs, err := c.History(ctx, "step", HistoryFilter{Limit: 1000})
				if err != nil {
					return false
				}
				done := map[time.Time]int{}
				for _, x := range xs {
					done[x.ScheduledAt.UTC()]++
				}
				for _, f := range fires {
					if done[f.UTC()] < 2 && f.Before(now.Add(-2*time.Second)) { // its own run at its time, and the backfill's
						return false
					}
				}
				return true
			})
		})
	}
}

// TestOverlapCancelChain: a chain whose step outlasts the interval is cut
// at the next fire under cancel; the cut fire is not resumed (the next
// replaces it), and no fire runs twice.
func TestOverlapCancelChain(t *testing.T) {
	t.Parallel()
	store, group := memory.New(), "g"
	var l ledger
	slow := func(ctx context.Context) error {
		l.record(ctx)
		select {
		case <-time.After(1600 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	start(t, fastConfig(store, group), func(s *Scheduler) {
		if err := s.Register("root", "* * * * * *", l.job(nil), Overlap(OverlapCancel)); err != nil {
			t.Fatal(err)
		}
		if err := s.Register("step", "", slow, Parent("root")); err != nil {
			t.Fatal(err)
		}
	})
	c := liveClient(t, store, group)
	waitFor(t, 15*time.Second, "four fires of the chain", func() bool { return l.count("root") >= 4 })
	if d := l.duplicates(); len(d) > 0 {
		t.Errorf("fires run twice (a cut chain resumed?): %v", d)
	}
	xs := runsOf(t, c, "step")
	for _, x := range xs[:len(xs)-1] {
		if x.Status != repository.ExecCancelled {
			t.Errorf("step of %s: %s %q, want cancelled at the next fire", x.ScheduledAt.Format(time.RFC3339), x.Status, x.Error)
		}
	}
}
