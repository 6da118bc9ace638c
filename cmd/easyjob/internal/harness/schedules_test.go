package harness

import (
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// TestSchedulesFlags: the runtime-schedules mode's flags are checked
// against --tasks and --duration, and exclude what cannot apply.
func TestSchedulesFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--schedules", "1000", "--tasks", "1000"}, true},
		{[]string{"--schedules", "1000", "--tasks", "0", "--burst", "10", "--duration", "45s"}, true},
		{[]string{"--schedules", "10", "--tasks", "11"}, false},                                     // K > N
		{[]string{"--schedules", "10", "--tasks", "0"}, false},                                      // nothing due
		{[]string{"--burst", "10", "--duration", "45s"}, false},                                     // --burst needs --schedules
		{[]string{"--schedules", "10", "--tasks", "1", "--burst", "5", "--duration", "20s"}, false}, // the burst would fall after the end
		{[]string{"--schedules", "10", "--tasks", "1", "--create-batch", "0"}, false},
		{[]string{"--schedules", "10", "--tasks", "1", "--create-writers", "0"}, false},
		{[]string{"--schedules", "10", "--tasks", "1", "--chain-depth", "2"}, false},
		{[]string{"--schedules", "10", "--tasks", "1", "--find-capacity"}, false},
		{[]string{"--schedules", "-1"}, false},
		{[]string{"--tasks", "0"}, false}, // tasks registered in code: K >= 1 as before
	} {
		b := &benchCmd{}
		fs := b.flagSet()
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := b.check(fs)
		if (err == nil) != c.ok {
			t.Errorf("bench %q: err = %v, want ok %v", c.args, err, c.ok)
		}
		if err == nil && b.trial.sched.active() && (b.trial.params.Handler != benchHandler || !b.trial.sched.lists) {
			t.Errorf("bench %q: nodes register handler %q, lists %v: want %q and the lists measured", c.args, b.trial.params.Handler, b.trial.sched.lists, benchHandler)
		}
	}
}

// TestQuietCronNeverInTheWindow: the quiet schedules' first fire after
// the window opens comes after it closes, by the library's own cron
// reading, wherever the window falls in the day (across midnight too),
// and their times of day are spread over the rest of the day.
func TestQuietCronNeverInTheWindow(t *testing.T) {
	for _, from := range []time.Time{
		time.Date(2026, 3, 1, 10, 17, 42, 500e6, time.UTC),
		time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC), // the window crosses midnight
		time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 21, 59, 59, 999e6, time.UTC),
	} {
		for _, span := range []time.Duration{time.Second, quietAfter + time.Minute, quietAfter + 6*time.Hour + time.Minute} {
			to := from.Add(span)
			for _, n := range []int{1, 7, 100000} {
				for _, i := range []int{0, 1, n / 3, n / 2, n - 2, n - 1} {
					if i < 0 || i >= n {
						continue
					}
					cron := quietCron(i, n, from, to)
					next, err := easyjob.NextFires(cron, "", from, 1)
					if err != nil {
						t.Fatalf("quietCron(%d, %d) = %q: %v", i, n, cron, err)
					}
					if !next[0].After(to) {
						t.Errorf("window %s..%s: quietCron(%d, %d) = %q fires at %s, inside it",
							from.Format(time.TimeOnly), to.Format(time.TimeOnly), i, n, cron, next[0].Format(time.TimeOnly))
					}
					// Spread: schedule i fires i/n of the way through the rest of the day.
					want := time.Duration(float64(24*time.Hour-span) * float64(i) / float64(n))
					if got := next[0].Sub(to); n == 100000 && (got < want-2*time.Second || got > want+2*time.Second) {
						t.Errorf("window %s + %s: schedule %d of %d fires %s after it, want about %s",
							from.Format(time.TimeOnly), span, i, n, got, want)
					}
				}
			}
		}
	}
}

// TestSchedulePlan: the creation order is the quiet schedules, the K
// every-second ones, then the burst at one time burstLead past the
// measured window's opening; the steady fires are the K's alone.
func TestSchedulePlan(t *testing.T) {
	now := time.Now()
	pl := newSchedulePlan(scheduleOpts{total: 5, burst: 2}, 2, "* * * * * *", now)
	var got []easyjob.Schedule
	for k := range pl.count() {
		got = append(got, pl.schedule(k))
	}
	want := []string{"t00002", "t00003", "t00004", "t00000", "t00001", "b00000", "b00001"}
	for k, s := range got {
		if s.Name != want[k] || s.Handler != benchHandler {
			t.Fatalf("schedule %d: %q (handler %q), want %q", k, s.Name, s.Handler, want[k])
		}
	}
	if got[0].Cron == pl.cron || got[3].Cron != pl.cron || got[5].Cron != "" || got[5].At.IsZero() || !got[5].At.Equal(got[6].At) {
		t.Fatalf("crons %q %q %q, burst at %v and %v", got[0].Cron, got[3].Cron, got[5].Cron, got[5].At, got[6].At)
	}
	if lead := pl.burstAt.Sub(now); lead < steadyStart+burstLead || lead > steadyStart+burstLead+2*time.Second || pl.burstAt.Nanosecond() != 0 {
		t.Fatalf("burst at %v, %v after the plan: want a whole second %v after", pl.burstAt, lead, steadyStart+burstLead)
	}
	if !pl.isQuiet("t00002") || !pl.isQuiet("t00004") || pl.isQuiet("t00001") || pl.isQuiet("t00005") || pl.isQuiet("b00000") || !isBurst("b00001") || isBurst("bench") {
		t.Fatal("isQuiet/isBurst misclassify")
	}
	fires := []fire{{Task: "t00000"}, {Task: "t00002"}, {Task: "b00000"}, {Task: "t00001"}}
	if s := pl.steadyFires(fires); len(s) != 2 || s[0].Task != "t00000" || s[1].Task != "t00001" {
		t.Fatalf("steady fires %+v, want t00000 and t00001", s)
	}
}

// TestAnalyzeBurst: each burst schedule's first run counts, its lag
// against the burst second; a schedule that never ran is missed.
func TestAnalyzeBurst(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ns := func(d time.Duration) int64 { return at.Add(d).UnixNano() }
	fires := []fire{
		{Task: "b00000", Sched: ns(0), Start: ns(2 * time.Millisecond), Node: 2},
		{Task: "b00001", Sched: ns(0), Start: ns(40 * time.Millisecond), Node: 1},
		{Task: "b00001", Sched: ns(0), Start: ns(900 * time.Millisecond), Node: 2}, // a second run: a duplicate, not a lag
		{Task: "b00002", Sched: ns(time.Second), Start: ns(1100 * time.Millisecond), Node: 2},
		{Task: "t00000", Sched: ns(0), Start: ns(5 * time.Second)}, // not the burst's
	}
	r := analyzeBurst(fires, isBurst, at, 4)
	if r.Fired != 3 || r.Missed != 1 || r.OtherSched != 1 {
		t.Fatalf("fired %d missed %d other %d, want 3, 1, 1", r.Fired, r.Missed, r.OtherSched)
	}
	if r.Lag.N != 3 || r.Lag.P50 != 40 || r.Lag.Max != 1100 || r.Lag.Min != 2 || r.SpreadMS != 1098 {
		t.Fatalf("lag %+v spread %v", r.Lag, r.SpreadMS)
	}
	if len(r.ByNode) != 2 || r.ByNode[0].Node != 1 || r.ByNode[0].Lag.N != 1 || r.ByNode[0].Lag.Max != 40 ||
		r.ByNode[1].Node != 2 || r.ByNode[1].Lag.N != 2 || r.ByNode[1].Lag.Max != 1100 {
		t.Fatalf("by node %+v; want node 1: the one first run at 40ms, node 2: two, the latest at 1100ms", r.ByNode)
	}
	if e := analyzeBurst(nil, isBurst, at, 2); e.Missed != 2 || e.Lag.N != 0 || e.SpreadMS != 0 {
		t.Fatalf("no fire: %+v", e)
	}
}

// TestCountingStoreTimesCalls: the counting store adds up the time each
// method's calls took, and a window's difference keeps it.
func TestCountingStoreTimesCalls(t *testing.T) {
	s, c := newCountingStore(memory.New())
	if _, err := s.Now(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.snapshot().CallNanos["Now"]; !ok {
		t.Fatalf("snapshot %+v: no call time of Now", c.snapshot())
	}
	a := storeStats{Calls: map[string]int64{"DueTasks": 2}, CallNanos: map[string]int64{"DueTasks": 5e6}}
	b := storeStats{Calls: map[string]int64{"DueTasks": 5}, CallNanos: map[string]int64{"DueTasks": 11e6}}
	if d := b.sub(a); d.CallNanos["DueTasks"] != 6e6 {
		t.Fatalf("window call time %v, want 6ms", d.CallNanos)
	}
	var sum storeStats
	sum.add(a)
	sum.add(b)
	if sum.CallNanos["DueTasks"] != 16e6 {
		t.Fatalf("summed call time %v, want 16ms", sum.CallNanos)
	}
}
