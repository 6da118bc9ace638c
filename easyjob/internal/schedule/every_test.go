package schedule

import (
	"errors"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
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
		if s.every != c.every || s.Empty() {
			t.Errorf("%q: every %v, want %v", c.expr, s.every, c.every)
		}
	}
	for _, expr := range []string{"@every", "@every 0s", "@every -5s", "@every 500ms", "@every 1.5s", "@every 5 m", "@every five", "@every 1m 2m"} {
		if _, err := Parse(expr, ""); !errors.Is(err, ErrInvalidCron) {
			t.Errorf("Parse(%q) = %v, want ErrInvalidCron", expr, err)
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
		if n, _ := s.Next(schedRef); s.every != 0 || !n.Equal(want) {
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
		n, ok := s.Next(at)
		wantNext := first.Add(90 * time.Second)
		if d < 0 {
			wantNext = first
		}
		if !ok || !n.Equal(wantNext) {
			t.Errorf("next(first%+v) = %v, want %v", d, n, wantNext)
		}
		p, ok := s.Prev(at)
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
	if p, _ := mustSchedule(t, "@every 1m", "").Prev(old); !p.Equal(time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC)) {
		t.Errorf("prev before the epoch = %v", p)
	}
}

// TestEveryMisfire: the misfire policies walk the same grid.
func TestEveryMisfire(t *testing.T) {
	s := mustSchedule(t, "@every 90s", "")
	sched, _ := s.Next(planT0)
	// On time, even when the run overran into the next period: the fire
	// after the scheduled one (fixed rate from the scheduled time).
	if p := PlanFire(s, planOpts("", 0), sched, sched.Add(3*time.Second)); !p.Run || !p.Next.Equal(sched.Add(90*time.Second)) {
		t.Errorf("on time: %+v", p)
	}
	late := sched.Add(10*time.Minute + 7*time.Second) // six fires missed
	if p := PlanFire(s, planOpts(repository.MisfireFireOnceNow, 0), sched, late); !p.Run || p.Misfire == "" || p.Next.Unix()%90 != 0 || !p.Next.After(late) || p.Next.Sub(late) > 90*time.Second {
		t.Errorf("fire once now: %+v, want a run and the next grid point after %v", p, late)
	}
	if p := PlanFire(s, planOpts(repository.MisfireSkip, 0), sched, late); p.Run || p.Next.Unix()%90 != 0 || !p.Next.After(late) {
		t.Errorf("skip: %+v", p)
	}
	p := PlanFire(s, planOpts(repository.MisfireCatchUp, 3), sched, late)
	newest, _ := s.Prev(late)
	if p.Run || !p.Next.Equal(newest.Add(-2*90*time.Second)) {
		t.Errorf("catch up 3: %+v, want the third newest missed fire %v", p, newest.Add(-2*90*time.Second))
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
		if _, ok := s.Next(schedRef); !ok {
			t.Errorf("%q never fires", expr)
		}
	}
}

// TestEveryAnchored: an anchored @every grid starts at its anchor (to the
// second), before and after it; a cron ignores the anchor.
func TestEveryAnchored(t *testing.T) {
	s, err := Parse("@every 90s", "")
	if err != nil {
		t.Fatal(err)
	}
	anchor := time.Date(2026, 3, 1, 10, 0, 7, 400e6, time.UTC) // to the second: 10:00:07
	a := s.AnchoredAt(anchor)
	for _, c := range []struct{ at, next, prev string }{
		{"10:00:07", "10:01:37", "10:00:07"},
		{"10:00:08", "10:01:37", "10:00:07"},
		{"10:01:37", "10:03:07", "10:01:37"},
		{"09:59:00", "10:00:07", "09:58:37"}, // before the anchor: the same grid
	} {
		at := mustClock(t, c.at)
		if n, _ := a.Next(at); !n.Equal(mustClock(t, c.next)) {
			t.Errorf("Next(%s) = %s, want %s", c.at, n.Format(time.TimeOnly), c.next)
		}
		if p, _ := a.Prev(at); !p.Equal(mustClock(t, c.prev)) {
			t.Errorf("Prev(%s) = %s, want %s", c.at, p.Format(time.TimeOnly), c.prev)
		}
	}
	if n, _ := s.Next(mustClock(t, "10:00:08")); n.Unix()%90 != 0 {
		t.Errorf("unanchored Next = %v, off the epoch grid", n)
	}
	cron, _ := Parse("0 * * * * *", "")
	if n, _ := cron.AnchoredAt(anchor).Next(mustClock(t, "10:00:08")); !n.Equal(mustClock(t, "10:01:00")) {
		t.Errorf("anchored cron Next = %v, want 10:01:00", n)
	}
}

func mustClock(t *testing.T, hms string) time.Time {
	t.Helper()
	c, err := time.Parse(time.TimeOnly, hms)
	if err != nil {
		t.Fatal(err)
	}
	return time.Date(2026, 3, 1, c.Hour(), c.Minute(), c.Second(), 0, time.UTC)
}
