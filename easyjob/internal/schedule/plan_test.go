package schedule

import (
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var planT0 = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

func planOpts(p repository.MisfireAction, n int) repository.TaskOptions {
	return repository.TaskOptions{Misfire: p, CatchUpMax: n, MisfireThreshold: 5 * time.Second}
}

func TestPlanFireOnTime(t *testing.T) {
	s := mustSchedule(t, "0 * * * * *", "") // every minute
	for _, late := range []time.Duration{0, 10 * time.Millisecond, time.Second, 5 * time.Second} {
		p := PlanFire(s, planOpts(repository.MisfireSkip, 0), planT0, planT0.Add(late))
		if !p.Run || p.Misfire != "" || p.Done || !p.Next.Equal(planT0.Add(time.Minute)) {
			t.Errorf("late %v: %+v, want run, on time, next %v", late, p, planT0.Add(time.Minute))
		}
	}
	// Found early (clock skew): still on time, next after the scheduled fire.
	p := PlanFire(s, planOpts("", 0), planT0, planT0.Add(-time.Second))
	if !p.Run || p.Misfire != "" || !p.Next.Equal(planT0.Add(time.Minute)) {
		t.Errorf("early: %+v", p)
	}
}

// TestPlanFireOverrunDelays: a run that overran its next fires (but is
// within the threshold) gets the fire right after the scheduled one, which
// is already in the past: it runs next, late, once. Fires are delayed,
// never doubled or bunched.
func TestPlanFireOverrunDelays(t *testing.T) {
	s := mustSchedule(t, "* * * * * *", "")
	now := planT0.Add(4 * time.Second)
	p := PlanFire(s, planOpts("", 0), planT0, now)
	if !p.Run || p.Misfire != "" || !p.Next.Equal(planT0.Add(time.Second)) || !p.Next.Before(now) {
		t.Fatalf("overrun: %+v, want next %v (in the past)", p, planT0.Add(time.Second))
	}
	// Each call plans exactly one successor, in order.
	sched := planT0
	for i := 1; i <= 3; i++ {
		p := PlanFire(s, planOpts("", 0), sched, now)
		if !p.Next.Equal(sched.Add(time.Second)) {
			t.Fatalf("step %d: next %v, want %v", i, p.Next, sched.Add(time.Second))
		}
		sched = p.Next
	}
}

func TestPlanFireLateFireOnceNow(t *testing.T) {
	s := mustSchedule(t, "0 * * * * *", "")
	now := planT0.Add(10*time.Minute + 17*time.Second) // ten fires missed
	for _, pol := range []repository.MisfireAction{repository.MisfireFireOnceNow, ""} {
		p := PlanFire(s, planOpts(pol, 0), planT0, now)
		if !p.Run || p.Misfire != repository.MisfireFireOnceNow || p.Done {
			t.Fatalf("policy %q: %+v", pol, p)
		}
		if want := planT0.Add(11 * time.Minute); !p.Next.Equal(want) {
			t.Fatalf("policy %q: next %v, want the first fire after now %v", pol, p.Next, want)
		}
	}
}

func TestPlanFireThresholdDefault(t *testing.T) {
	s := mustSchedule(t, "0 * * * * *", "")
	o := repository.TaskOptions{Misfire: repository.MisfireSkip} // threshold 0: default 5s
	if p := PlanFire(s, o, planT0, planT0.Add(DefaultMisfireThreshold)); !p.Run || p.Misfire != "" {
		t.Errorf("at the threshold: %+v, want on time", p)
	}
	if p := PlanFire(s, o, planT0, planT0.Add(DefaultMisfireThreshold+time.Millisecond)); p.Run || p.Misfire != repository.MisfireSkip {
		t.Errorf("past the threshold: %+v, want skipped", p)
	}
	o.MisfireThreshold = time.Hour
	if p := PlanFire(s, o, planT0, planT0.Add(30*time.Minute)); !p.Run || p.Misfire != "" || !p.Next.Equal(planT0.Add(time.Minute)) {
		t.Errorf("custom threshold: %+v", p)
	}
}

func TestPlanFireLateSkip(t *testing.T) {
	s := mustSchedule(t, "0 * * * * *", "")
	now := planT0.Add(10*time.Minute + 17*time.Second)
	p := PlanFire(s, planOpts(repository.MisfireSkip, 0), planT0, now)
	if p.Run || p.Misfire != repository.MisfireSkip || p.Done || !p.Next.Equal(planT0.Add(11*time.Minute)) {
		t.Fatalf("skip: %+v", p)
	}
}

// simulateCatchUp drives planFire like a worker would after an outage:
// the fire at sched is found at now; each run takes step; it stops once
// a fire is on time again and returns the runs made while catching up.
func simulateCatchUp(t *testing.T, s Schedule, o repository.TaskOptions, sched, now time.Time, step time.Duration) (runs []time.Time, back time.Time) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if sched.After(now) {
			now = sched // wait for it: the worker sleeps until it is due
		}
		p := PlanFire(s, o, sched, now)
		if p.Misfire == "" {
			return runs, sched // back on schedule
		}
		if p.Misfire != repository.MisfireCatchUp {
			t.Fatalf("misfire = %q", p.Misfire)
		}
		if p.Run {
			runs = append(runs, sched)
		}
		if p.Done {
			return runs, time.Time{}
		}
		sched = p.Next
		now = now.Add(step)
	}
	t.Fatalf("catch-up did not end after 1000 fires; runs so far %d", len(runs))
	return nil, time.Time{}
}

func TestPlanFireCatchUpBounded(t *testing.T) {
	s := mustSchedule(t, "0 0 * * * *", "") // hourly
	// Down from 00:00 to 10:00:30: the fires 00:00 … 10:00 were missed.
	now := planT0.Add(30 * time.Second)
	start := planT0.Add(-10 * time.Hour)
	for _, n := range []int{1, 2, 3, 5, 11, 50} {
		runs, back := simulateCatchUp(t, s, planOpts(repository.MisfireCatchUp, n), start, now, 100*time.Millisecond)
		if len(runs) > n {
			t.Errorf("CatchUp(%d): %d runs %v", n, len(runs), runs)
		}
		if len(runs) == 0 {
			t.Errorf("CatchUp(%d): no run at all", n)
		}
		// At most the 11 missed fires; each one at most once.
		seen := map[time.Time]bool{}
		for _, r := range runs {
			if seen[r] {
				t.Errorf("CatchUp(%d): fire %v ran twice", n, r)
			}
			seen[r] = true
		}
		if want := planT0.Add(time.Hour); !back.Equal(want) {
			t.Errorf("CatchUp(%d): back on schedule at %v, want %v", n, back, want)
		}
		t.Logf("CatchUp(%d): runs %v", n, runs)
	}
	// CatchUp(3): the newest three missed fires run, oldest first; the
	// stale one is recorded as skipped.
	runs, _ := simulateCatchUp(t, s, planOpts(repository.MisfireCatchUp, 3), start, now, 100*time.Millisecond)
	want := []time.Time{planT0.Add(-2 * time.Hour), planT0.Add(-time.Hour), planT0}
	sameTimes(t, "CatchUp(3)", runs, want)
}

// TestPlanFireCatchUpLongOutage: an every-second task down for three days
// (259200 missed fires): CatchUp(n) still runs at most n of them, cheaply.
func TestPlanFireCatchUpLongOutage(t *testing.T) {
	s := mustSchedule(t, "* * * * * *", "")
	now := planT0
	start := now.Add(-72 * time.Hour) // 259200 missed fires
	const n = 2
	runs, back := simulateCatchUp(t, s, planOpts(repository.MisfireCatchUp, n), start, now, 100*time.Millisecond)
	if len(runs) > n {
		t.Errorf("CatchUp(%d) after a 72h outage of an every-second task ran %d fires (want <= %d): %v", n, len(runs), n, runs)
	}
	if back.IsZero() || now.Sub(back) > DefaultMisfireThreshold {
		t.Errorf("not back on schedule: %v", back)
	}
}

func TestPlanFireDone(t *testing.T) {
	s := mustSchedule(t, "0 0 0 1 1 * 2099", "")
	at := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	p := PlanFire(s, planOpts("", 0), at, at.Add(time.Second))
	if !p.Run || !p.Done || p.Misfire != "" {
		t.Errorf("last fire on time: %+v, want run and done", p)
	}
	for _, pol := range []repository.MisfireAction{repository.MisfireFireOnceNow, repository.MisfireSkip, repository.MisfireCatchUp} {
		p := PlanFire(s, planOpts(pol, 3), at, at.Add(time.Hour))
		if !p.Done {
			t.Errorf("%s, late last fire: %+v, want done", pol, p)
		}
		if p.Run == (pol == repository.MisfireSkip) {
			t.Errorf("%s: run = %v", pol, p.Run)
		}
	}
}

// TestPlanFireDSTFallBackLate: the 01:30 New York fire of 2026-11-01 (the
// first of the two 01:30s, EDT) is found late, at 01:45 EDT. Fire once now
// runs it then; the next fire should be November 2, but it comes from the
// cron after now, which is the second 01:30 (EST) of the same day: the
// daily task runs twice on the fall-back day.
func TestPlanFireDSTFallBackLate(t *testing.T) {
	s := mustSchedule(t, "30 1 * * *", "America/New_York")
	sched := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC) // 01:30 EDT
	now := time.Date(2026, 11, 1, 5, 45, 0, 0, time.UTC)   // 01:45 EDT
	p := PlanFire(s, planOpts(repository.MisfireFireOnceNow, 0), sched, now)
	if want := time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC); !p.Next.Equal(want) {
		t.Errorf("BUG: late 01:30 EDT fire run at 01:45 EDT plans next %v, want %v: "+
			"the daily task fires twice on the fall-back day (misfire.go planFire: from = now)",
			p.Next.In(s.loc), want.In(s.loc))
	}
}
