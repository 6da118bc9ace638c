package schedule

import (
	"fmt"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestSpreadOf: the offset depends on the name alone, lies in [0, window)
// in whole milliseconds, and spreads the tasks of one cron over the
// window.
func TestSpreadOf(t *testing.T) {
	const window = time.Minute
	seconds := map[int64]int{}
	for i := range 10000 {
		name := fmt.Sprintf("task-%d", i)
		off := SpreadOf(name, window)
		if off < 0 || off >= window || off%time.Millisecond != 0 {
			t.Fatalf("SpreadOf(%q, %v) = %v: want whole ms in [0, %v)", name, window, off, window)
		}
		if again := SpreadOf(name, window); again != off {
			t.Fatalf("SpreadOf(%q) = %v then %v", name, off, again)
		}
		seconds[int64(off/time.Second)]++
	}
	if len(seconds) != 60 {
		t.Errorf("10,000 tasks over a minute hit %d distinct seconds, want 60", len(seconds))
	}
	for sec, n := range seconds {
		if n > 2*10000/60 {
			t.Errorf("second %d holds %d of 10,000 offsets: not spread", sec, n)
		}
	}
	if got := SpreadOf("x", 0); got != 0 {
		t.Errorf("SpreadOf with no window = %v, want 0", got)
	}
}

// TestSpreadShiftsGrid: a spread schedule's fires are exactly its cron's
// fires + the task's offset, across DST changes (Europe/Paris spring and
// autumn), for second, minute, hourly and daily crons and @every; Prev
// and Next agree on every fire.
func TestSpreadShiftsGrid(t *testing.T) {
	const name = "report"
	for _, c := range []struct {
		expr, tz string
		from     time.Time
		window   time.Duration
		// fallBack: the fires cross an autumn set-back, where the
		// cron's own Prev of a time in the repeated hour is not always
		// the previous fire (not the spread's doing).
		fallBack bool
	}{
		{"0 * * * *", "", schedRef, time.Hour, false},
		{"0 30 2 * * *", "Europe/Paris", time.Date(2026, 3, 26, 0, 0, 0, 0, time.UTC), 50 * time.Minute, false},
		{"0 30 2 * * *", "Europe/Paris", time.Date(2026, 10, 22, 0, 0, 0, 0, time.UTC), 50 * time.Minute, true},
		{"0 */20 * * * *", "Europe/Paris", time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), 10 * time.Minute, true},
		{"0 0 * * *", "America/Santiago", time.Date(2025, 9, 4, 0, 0, 0, 0, time.UTC), 2 * time.Hour, false},
		{"*/5 * * * * *", "", schedRef, 5 * time.Second, false},
		{"@every 90s", "", schedRef, time.Minute, false},
		{"@every 1h", "Asia/Kolkata", schedRef, 3 * time.Hour, false},
	} {
		t.Run(c.expr+" "+c.tz, func(t *testing.T) {
			plain := mustSchedule(t, c.expr, c.tz)
			off := SpreadOf(name, c.window)
			spread := plain.ForTask(name, repository.TaskOptions{Spread: c.window}, time.Time{})
			if spread.Shift() != off || off == 0 {
				t.Fatalf("Shift() = %v, want SpreadOf = %v (not 0 for this name)", spread.Shift(), off)
			}
			want := plain.Fires(c.from.Add(-off), 30)
			got := spread.Fires(c.from, 30)
			if len(got) != len(want) {
				t.Fatalf("%d fires, want %d", len(got), len(want))
			}
			for i := range want {
				if w := want[i].Add(off); !got[i].Equal(w) {
					t.Fatalf("fire %d: %v, want cron %v + %v = %v", i, got[i], want[i], off, w)
				}
				if p, ok := spread.Prev(got[i]); !ok || !p.Equal(got[i]) {
					t.Errorf("Prev(%v) = %v %v, want itself", got[i], p, ok)
				}
				if n, ok := spread.Next(got[i].Add(-time.Nanosecond)); !ok || !n.Equal(got[i]) {
					t.Errorf("Next(just before %v) = %v %v, want it", got[i], n, ok)
				}
				// Just before a fire, Prev is the cron's Prev moved (the
				// previous fire, but where the cron's own Prev differs
				// around an autumn set-back).
				before := got[i].Add(-time.Nanosecond)
				p, ok := spread.Prev(before)
				pp, pok := plain.Prev(before.Add(-off))
				if ok != pok || (ok && !p.Equal(pp.Add(off))) {
					t.Errorf("Prev(just before %v) = %v %v, want the cron's %v %v + offset", got[i], p, ok, pp, pok)
				}
				if i > 0 && !c.fallBack && (!ok || !p.Equal(got[i-1])) {
					t.Errorf("Prev(just before %v) = %v %v, want %v", got[i], p, ok, got[i-1])
				}
			}
			// Spread again (a registered spec's schedule given ForTask
			// once more) does not add a second offset.
			if again := spread.ForTask(name, repository.TaskOptions{Spread: c.window}, time.Time{}); again.Shift() != off {
				t.Errorf("ForTask twice: shift %v, want %v", again.Shift(), off)
			}
		})
	}
}

// TestSpreadWindow: a window bounds the moved times, not the cron's.
func TestSpreadWindow(t *testing.T) {
	const name = "report"
	plain := mustSchedule(t, "0 * * * *", "")
	off := SpreadOf(name, time.Hour)
	hour := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
	// Start at 10:00+off exactly: the first fire is then; a start just
	// after it moves the first fire to 11:00+off. End just before
	// 12:00+off makes 11:00+off the last.
	for _, c := range []struct {
		start, end  time.Time
		first, last time.Time
	}{
		{hour.Add(off), hour.Add(2*time.Hour + off - time.Millisecond), hour.Add(off), hour.Add(time.Hour + off)},
		{hour.Add(off + time.Millisecond), hour.Add(2*time.Hour + off), hour.Add(time.Hour + off), hour.Add(2*time.Hour + off)},
	} {
		s := plain.ForTask(name, repository.TaskOptions{Spread: time.Hour, Start: c.start, End: c.end}, time.Time{})
		fires := s.Fires(hour.Add(-24*time.Hour), 10)
		if len(fires) == 0 || !fires[0].Equal(c.first) || !fires[len(fires)-1].Equal(c.last) {
			t.Errorf("window [%v, %v]: fires %v, want %v ... %v", c.start, c.end, fires, c.first, c.last)
		}
		if p, ok := s.Prev(hour.Add(48 * time.Hour)); !ok || !p.Equal(c.last) {
			t.Errorf("window [%v, %v]: Prev after the end = %v %v, want %v", c.start, c.end, p, ok, c.last)
		}
		if p, ok := s.Prev(c.first.Add(-time.Nanosecond)); ok {
			t.Errorf("window [%v, %v]: Prev before the first = %v, want none", c.start, c.end, p)
		}
	}
}

// TestSpreadOneOffAndEmpty: "@at" keeps its explicit time; a child's
// empty schedule has no fires either way.
func TestSpreadOneOffAndEmpty(t *testing.T) {
	at := schedRef.Add(time.Hour).Truncate(time.Second)
	s := mustSchedule(t, "@at "+at.Format(time.RFC3339), "").Spread("x", time.Hour)
	if n, ok := s.Next(schedRef); !ok || !n.Equal(at) || s.Shift() != 0 {
		t.Errorf("@at spread: Next = %v %v (shift %v), want %v unmoved", n, ok, s.Shift(), at)
	}
	if _, ok := mustSchedule(t, "", "").Spread("x", time.Hour).Next(schedRef); ok {
		t.Error("an empty schedule spread has a fire")
	}
}

// TestSpreadMisfire: a fire found late lands back on the moved grid.
func TestSpreadMisfire(t *testing.T) {
	const name = "report"
	s := mustSchedule(t, "0 * * * *", "").Spread(name, time.Hour)
	off := s.Shift()
	scheduled := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC).Add(off)
	for _, o := range []repository.TaskOptions{{}, {Misfire: repository.MisfireSkip}, {Misfire: repository.MisfireCatchUp, CatchUpMax: 1}} {
		p := PlanFire(s, o, scheduled, scheduled.Add(3*time.Hour+time.Minute))
		if want := scheduled.Add(4 * time.Hour); o.Misfire != repository.MisfireCatchUp && !p.Next.Equal(want) {
			t.Errorf("%q: next %v, want %v", o.Misfire, p.Next, want)
		}
		if want := scheduled.Add(3 * time.Hour); o.Misfire == repository.MisfireCatchUp && !p.Next.Equal(want) {
			t.Errorf("catch-up: next %v, want the newest missed %v", p.Next, want)
		}
	}
	if p := PlanFire(s, repository.TaskOptions{}, scheduled, scheduled); !p.Next.Equal(scheduled.Add(time.Hour)) || p.Misfire != "" {
		t.Errorf("on time: %+v, want next %v", p, scheduled.Add(time.Hour))
	}
}
