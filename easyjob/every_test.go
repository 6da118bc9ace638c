package easyjob

import (
	"errors"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

func TestEveryParse(t *testing.T) {
	for _, c := range []struct {
		expr  string
		every time.Duration
	}{
		{"@every 90s", 90 * time.Second},
		{"@every 5m", 5 * time.Minute},
		{"@EVERY 1h30m", 90 * time.Minute},
		{"  @every   2s  ", 2 * time.Second},
		{"CRON_TZ=Asia/Tokyo @every 1m", time.Minute},
	} {
		s := mustSchedule(t, c.expr, "")
		if s.every != c.every || s.empty() {
			t.Errorf("%q: every %v, want %v", c.expr, s.every, c.every)
		}
	}
	for _, expr := range []string{"@every", "@every 0s", "@every -5s", "@every 500ms", "@every 1.5s", "@every 5 m", "@every five", "@every 1m 2m"} {
		if _, err := parseSchedule(expr, ""); !errors.Is(err, ErrInvalidCron) {
			t.Errorf("parseSchedule(%q) = %v, want ErrInvalidCron", expr, err)
		}
	}
	// The macros gronx knows stay cron expressions.
	for expr, want := range map[string]time.Time{
		"@hourly":      time.Date(2026, 6, 15, 11, 0, 0, 0, time.UTC),
		"@daily":       time.Date(2026, 6, 16, 0, 0, 0, 0, time.UTC),
		"@5minutes":    time.Date(2026, 6, 15, 10, 5, 0, 0, time.UTC),
		"@everysecond": schedRef.Add(time.Second),
	} {
		s := mustSchedule(t, expr, "")
		if n, _ := s.next(schedRef); s.every != 0 || !n.Equal(want) {
			t.Errorf("%q: next %v, want %v", expr, n, want)
		}
	}
}

// TestEveryGrid: fires lie on the multiples of the period since the epoch,
// whatever the reference time, the zone or the precision of the input.
func TestEveryGrid(t *testing.T) {
	s := mustSchedule(t, "@every 90s", "Asia/Tokyo")
	got := walkFires(t, s, schedRef, 4)
	for i, f := range got {
		if f.Unix()%90 != 0 || f.Nanosecond() != 0 || f.Location() != time.UTC {
			t.Fatalf("fire %d = %v: not on the 90 s grid", i, f)
		}
		if i > 0 && f.Sub(got[i-1]) != 90*time.Second {
			t.Fatalf("fires %v: not 90 s apart", got)
		}
	}
	first := got[0]
	// next is strictly after, prev at or before, for any offset in a period.
	for _, d := range []time.Duration{-time.Nanosecond, 0, time.Nanosecond, time.Millisecond, 45 * time.Second, 90*time.Second - time.Nanosecond} {
		at := first.Add(d)
		n, ok := s.next(at)
		wantNext := first.Add(90 * time.Second)
		if d < 0 {
			wantNext = first
		}
		if !ok || !n.Equal(wantNext) {
			t.Errorf("next(first%+v) = %v, want %v", d, n, wantNext)
		}
		p, ok := s.prev(at)
		wantPrev := first
		if d < 0 {
			wantPrev = first.Add(-90 * time.Second)
		}
		if !ok || !p.Equal(wantPrev) {
			t.Errorf("prev(first%+v) = %v, want %v", d, p, wantPrev)
		}
	}
	// Every 5 minutes is the cron's */5: the same fires.
	five, cron := mustSchedule(t, "@every 5m", ""), mustSchedule(t, "*/5 * * * *", "")
	sameTimes(t, "@every 5m vs */5", walkFires(t, five, schedRef, 5), walkFires(t, cron, schedRef, 5))
	// Before the epoch the grid continues (floor, not truncation).
	old := time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)
	if p, _ := mustSchedule(t, "@every 1m", "").prev(old); !p.Equal(time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC)) {
		t.Errorf("prev before the epoch = %v", p)
	}
}

// TestEveryMisfire: the misfire policies walk the same grid.
func TestEveryMisfire(t *testing.T) {
	s := mustSchedule(t, "@every 90s", "")
	sched, _ := s.next(planT0)
	// On time, even when the run overran into the next period: the fire
	// after the scheduled one (fixed rate from the scheduled time).
	if p := planFire(s, planOpts("", 0), sched, sched.Add(3*time.Second)); !p.run || !p.next.Equal(sched.Add(90*time.Second)) {
		t.Errorf("on time: %+v", p)
	}
	late := sched.Add(10*time.Minute + 7*time.Second) // six fires missed
	if p := planFire(s, planOpts(repository.MisfireFireOnceNow, 0), sched, late); !p.run || p.misfire == "" || p.next.Unix()%90 != 0 || !p.next.After(late) || p.next.Sub(late) > 90*time.Second {
		t.Errorf("fire once now: %+v, want a run and the next grid point after %v", p, late)
	}
	if p := planFire(s, planOpts(repository.MisfireSkip, 0), sched, late); p.run || p.next.Unix()%90 != 0 || !p.next.After(late) {
		t.Errorf("skip: %+v", p)
	}
	p := planFire(s, planOpts(repository.MisfireCatchUp, 3), sched, late)
	newest, _ := s.prev(late)
	if p.run || !p.next.Equal(newest.Add(-2*90*time.Second)) {
		t.Errorf("catch up 3: %+v, want the third newest missed fire %v", p, newest.Add(-2*90*time.Second))
	}
}

// TestEveryIntervalAcrossFailover: an @every 90s task whose node dies
// holding the claim of its next fire is fired by a peer (late, once, for
// the same scheduled time) and then keeps the 90 s grid: the fire after
// the late one is exactly 90 s after the scheduled time, on time, once.
func TestEveryIntervalAcrossFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("waits one 90 s period")
	}
	t.Parallel()
	const period = 90 * time.Second
	// The store's clock is shifted so that a grid point G is 3 s ahead: the
	// test waits one period, not up to two. Nodes measure the offset to
	// the store's clock as they do with a database's.
	local := time.Now()
	shift := gridFloor(local, period).Add(period).Sub(local) - 3*time.Second
	store := memory.New(memory.WithClock(func() time.Time { return time.Now().Add(shift) }))
	var l ledger
	reg := func(s *Scheduler) { mustRegister(t, s, "every90", "@every 90s", l.job(nil)) }
	cfg := fastConfig(store, "every")

	a := start(t, cfg, reg)
	var claim repository.Task
	waitFor(t, 5*time.Second, "node A to claim the fire at G", func() bool {
		claim, _ = store.Task(t.Context(), "every", "every90")
		return claim.Status == repository.TaskDoing && claim.NodeID == a.n.id()
	})
	g := claim.NextStartTime
	if g.Unix()%90 != 0 {
		t.Fatalf("claimed fire %v is not on the grid", g)
	}
	a.crash(t) // before G: the claim dies with it
	if k := l.count("every90"); k != 0 {
		t.Fatalf("A fired before its crash: %d", k)
	}
	b := start(t, cfg, reg)

	waitFor(t, 10*time.Second, "B to fire G after recovering A's claim", func() bool { return l.count("every90") == 1 })
	waitFor(t, period+10*time.Second, "the fire at G + 90 s", func() bool { return l.count("every90") == 2 })
	time.Sleep(500 * time.Millisecond)
	fires := l.snapshot()
	if len(fires) != 2 {
		t.Fatalf("fires %+v, want 2", fires)
	}
	for i, f := range fires {
		if f.node != int64(b.n.id()) {
			t.Errorf("fire %d on node %d, want B (%d)", i, f.node, b.n.id())
		}
		if want := g.Add(time.Duration(i) * period); !f.scheduled.Equal(want) {
			t.Errorf("fire %d scheduled at %v, want %v (no drift)", i, f.scheduled, want)
		}
	}
	// The first fire is late by the failover; the next one is on time.
	if lag := fires[1].started.Add(shift).Sub(fires[1].scheduled); lag < 0 || lag > 500*time.Millisecond {
		t.Errorf("the fire after the failover started %v after its time", lag)
	}
	if d := l.duplicates(); len(d) > 0 {
		t.Errorf("fired twice: %v", d)
	}
}

// TestScheduleReadmeForms: every example of the README's schedule table
// is accepted.
func TestScheduleReadmeForms(t *testing.T) {
	for _, expr := range []string{
		"*/5 * * * *", "0 */5 * * * *", "0 0 9 * * 1-5 2027", "0 0 9 ? * MON",
		"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@hourly",
		"@30minutes", "@15minutes", "@10minutes", "@5minutes", "@always", "@everysecond",
		"@every 90s", "@every 1h30m", "CRON_TZ=Europe/Paris 0 9 * * *",
	} {
		s := mustSchedule(t, expr, "")
		if _, ok := s.next(schedRef); !ok {
			t.Errorf("%q never fires", expr)
		}
	}
}
