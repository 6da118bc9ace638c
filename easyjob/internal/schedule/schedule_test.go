package schedule

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func mustSchedule(t *testing.T, expr, tz string) Schedule {
	t.Helper()
	s, err := Parse(expr, tz)
	if err != nil {
		t.Fatalf("Parse(%q, %q): %v", expr, tz, err)
	}
	return s
}

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// walkFires returns the first k fires of s strictly after from.
func walkFires(t *testing.T, s Schedule, from time.Time, k int) []time.Time {
	t.Helper()
	var out []time.Time
	for range k {
		n, ok := s.Next(from)
		if !ok {
			t.Fatalf("%q: no fire after %v", s.expr, from)
		}
		if !n.After(from) {
			t.Fatalf("%q: next(%v) = %v, not strictly after", s.expr, from, n)
		}
		out = append(out, n)
		from = n
	}
	return out
}

func sameTimes(t *testing.T, what string, got, want []time.Time) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			t.Fatalf("%s: fire %d = %v, want %v (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

var schedRef = time.Date(2026, 6, 15, 10, 2, 30, 0, time.UTC) // a Monday

func TestScheduleFiveFieldsMinutePrecision(t *testing.T) {
	s := mustSchedule(t, "*/5 * * * *", "")
	got := walkFires(t, s, schedRef, 3)
	sameTimes(t, "*/5", got, []time.Time{
		time.Date(2026, 6, 15, 10, 5, 0, 0, time.UTC),
		time.Date(2026, 6, 15, 10, 10, 0, 0, time.UTC),
		time.Date(2026, 6, 15, 10, 15, 0, 0, time.UTC),
	})
	// Five fields always fire at second 0.
	s = mustSchedule(t, "* * * * *", "")
	got = walkFires(t, s, schedRef, 2)
	sameTimes(t, "every minute", got, []time.Time{
		time.Date(2026, 6, 15, 10, 3, 0, 0, time.UTC),
		time.Date(2026, 6, 15, 10, 4, 0, 0, time.UTC),
	})
	// Day of week: next Wednesday 09:00.
	s = mustSchedule(t, "0 9 * * 3", "")
	got = walkFires(t, s, schedRef, 2)
	sameTimes(t, "wednesdays", got, []time.Time{
		time.Date(2026, 6, 17, 9, 0, 0, 0, time.UTC),
		time.Date(2026, 6, 24, 9, 0, 0, 0, time.UTC),
	})
}

func TestScheduleSixFieldsSeconds(t *testing.T) {
	s := mustSchedule(t, "*/15 * * * * *", "")
	got := walkFires(t, s, schedRef.Add(7*time.Second), 4)
	base := time.Date(2026, 6, 15, 10, 2, 0, 0, time.UTC)
	sameTimes(t, "*/15s", got, []time.Time{
		base.Add(45 * time.Second), base.Add(60 * time.Second), base.Add(75 * time.Second), base.Add(90 * time.Second),
	})
	s = mustSchedule(t, "* * * * * *", "")
	got = walkFires(t, s, schedRef, 3)
	sameTimes(t, "every second", got, []time.Time{
		schedRef.Add(time.Second), schedRef.Add(2 * time.Second), schedRef.Add(3 * time.Second),
	})
}

func TestScheduleQuestionMarkAndSlash(t *testing.T) {
	s := mustSchedule(t, "0/10 * * * * ?", "")
	got := walkFires(t, s, schedRef.Add(3*time.Second), 4)
	sameTimes(t, "0/10 ?", got, []time.Time{
		schedRef.Add(10 * time.Second), schedRef.Add(20 * time.Second),
		time.Date(2026, 6, 15, 10, 3, 0, 0, time.UTC), time.Date(2026, 6, 15, 10, 3, 10, 0, time.UTC),
	})
}

func TestScheduleNextStrictlyAfter(t *testing.T) {
	for _, expr := range []string{"* * * * * *", "*/10 * * * * *", "0 * * * * *", "* * * * *", "0 0 * * *"} {
		s := mustSchedule(t, expr, "")
		fire, ok := s.Next(schedRef)
		if !ok {
			t.Fatalf("%q: no fire", expr)
		}
		// Exactly on a fire: the one after it.
		again, _ := s.Next(fire)
		if !again.After(fire) {
			t.Errorf("%q: next(fire %v) = %v", expr, fire, again)
		}
		// Just before a fire: that fire.
		for _, d := range []time.Duration{-time.Nanosecond, -time.Millisecond, -500 * time.Millisecond} {
			if n, _ := s.Next(fire.Add(d)); !n.Equal(fire) {
				t.Errorf("%q: next(fire%v) = %v, want %v", expr, d, n, fire)
			}
		}
		// Just after a fire (sub-second): the next fire, never the same one.
		for _, d := range []time.Duration{time.Nanosecond, time.Millisecond, 500 * time.Millisecond, 999 * time.Millisecond} {
			if n, _ := s.Next(fire.Add(d)); !n.Equal(again) {
				t.Errorf("%q: next(fire+%v) = %v, want %v", expr, d, n, again)
			}
		}
	}
}

func TestScheduleResultIsUTC(t *testing.T) {
	s := mustSchedule(t, "0 9 * * *", "Asia/Tokyo")
	n, ok := s.Next(schedRef.In(mustLoc(t, "America/Los_Angeles")))
	if !ok || n.Location() != time.UTC {
		t.Fatalf("next = %v (%v), want a UTC time", n, n.Location())
	}
}

func TestScheduleTimeZones(t *testing.T) {
	// 09:00 in Tokyo is 00:00 UTC.
	want := time.Date(2026, 6, 16, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct{ expr, tz string }{
		{"0 9 * * *", "Asia/Tokyo"},
		{"CRON_TZ=Asia/Tokyo 0 9 * * *", ""},
		{"  CRON_TZ=Asia/Tokyo   0 9 * * *  ", ""},
		// The expression's own CRON_TZ wins over the TZ option.
		{"CRON_TZ=Asia/Tokyo 0 9 * * *", "Europe/Berlin"},
	} {
		s := mustSchedule(t, c.expr, c.tz)
		if n, _ := s.Next(schedRef); !n.Equal(want) {
			t.Errorf("%q tz=%q: next = %v, want %v", c.expr, c.tz, n, want)
		}
	}
	// Without a zone, UTC.
	s := mustSchedule(t, "0 9 * * *", "")
	if n, _ := s.Next(schedRef); !n.Equal(time.Date(2026, 6, 16, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("UTC default: %v", n)
	}
	for _, c := range []struct{ expr, tz string }{
		{"CRON_TZ=Bad/Zone * * * * *", ""},
		{"* * * * *", "Bad/Zone"},
		{"CRON_TZ=Asia/Tokyo", ""},
	} {
		if _, err := Parse(c.expr, c.tz); !errors.Is(err, ErrInvalidCron) {
			t.Errorf("Parse(%q, %q) = %v, want ErrInvalidCron", c.expr, c.tz, err)
		}
	}
}

func TestScheduleEmpty(t *testing.T) {
	s := mustSchedule(t, "", "Asia/Tokyo")
	if !s.Empty() {
		t.Fatal("empty expression: want empty()")
	}
	if n, ok := s.Next(schedRef); ok {
		t.Fatalf("empty schedule fired at %v", n)
	}
	if s.loc.String() != "Asia/Tokyo" {
		t.Errorf("loc = %v", s.loc)
	}
}

func TestScheduleFinite(t *testing.T) {
	// A 7-field expression with a year: one fire, then none.
	s := mustSchedule(t, "0 0 0 1 1 * 2099", "")
	n, ok := s.Next(schedRef)
	if !ok || !n.Equal(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("next = %v, %v", n, ok)
	}
	if n2, ok := s.Next(n); ok {
		t.Fatalf("a one-year cron fired again at %v", n2)
	}
	for _, expr := range []string{"0 0 0 30 2 *", "0 0 31 4 *", "0 0 0 1 1 * 2001"} {
		if _, err := Parse(expr, ""); !errors.Is(err, ErrInvalidCron) {
			t.Errorf("Parse(%q) = %v, want ErrInvalidCron (never fires)", expr, err)
		}
	}
}

// TestScheduleDSTSpringForward: on 2026-03-08 New York clocks jump from
// 02:00 EST to 03:00 EDT, so 02:30 does not exist that day. gronx skips
// the nonexistent time: the daily 02:30 task does not run on March 8 at
// all (not at 03:30, not at 01:30); it resumes on March 9 at 02:30 EDT.
func TestScheduleDSTSpringForward(t *testing.T) {
	ny := mustLoc(t, "America/New_York")
	s := mustSchedule(t, "30 2 * * *", "America/New_York")
	from := time.Date(2026, 3, 6, 12, 0, 0, 0, ny)
	got := walkFires(t, s, from, 3)
	sameTimes(t, "spring forward", got, []time.Time{
		time.Date(2026, 3, 7, 7, 30, 0, 0, time.UTC),  // 02:30 EST
		time.Date(2026, 3, 9, 6, 30, 0, 0, time.UTC),  // 02:30 EDT; March 8 skipped
		time.Date(2026, 3, 10, 6, 30, 0, 0, time.UTC), // 02:30 EDT
	})
	// The same from a reference inside the gap day.
	for _, ref := range []time.Time{
		time.Date(2026, 3, 8, 0, 0, 0, 0, ny),
		time.Date(2026, 3, 8, 1, 59, 59, 999, ny),
		time.Date(2026, 3, 8, 3, 0, 0, 0, ny),
	} {
		if n, _ := s.Next(ref); !n.Equal(time.Date(2026, 3, 9, 6, 30, 0, 0, time.UTC)) {
			t.Errorf("next(%v) = %v, want March 9 02:30 EDT", ref, n.In(ny))
		}
	}
	// CRON_TZ is the same as the TZ option.
	s2 := mustSchedule(t, "CRON_TZ=America/New_York 30 2 * * *", "")
	sameTimes(t, "CRON_TZ spring forward", walkFires(t, s2, from, 3), got)
}

// TestScheduleDSTFallBack: on 2026-11-01 New York clocks go from 02:00 EDT
// back to 01:00 EST, so 01:00–01:59 happens twice. A daily task fires once
// that day whether its time is in the repeated hour or not.
func TestScheduleDSTFallBack(t *testing.T) {
	ny := mustLoc(t, "America/New_York")
	from := time.Date(2026, 10, 31, 12, 0, 0, 0, ny)

	s := mustSchedule(t, "30 2 * * *", "America/New_York")
	sameTimes(t, "02:30 fall back", walkFires(t, s, from, 3), []time.Time{
		time.Date(2026, 11, 1, 7, 30, 0, 0, time.UTC), // 02:30 EST
		time.Date(2026, 11, 2, 7, 30, 0, 0, time.UTC),
		time.Date(2026, 11, 3, 7, 30, 0, 0, time.UTC),
	})

	// 01:30 exists twice on November 1: the task fires at the first one
	// (EDT) only, not again an hour later at 01:30 EST.
	s = mustSchedule(t, "30 1 * * *", "America/New_York")
	sameTimes(t, "01:30 fall back", walkFires(t, s, from, 3), []time.Time{
		time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), // 01:30 EDT
		time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC), // 01:30 EST, next day
		time.Date(2026, 11, 3, 6, 30, 0, 0, time.UTC),
	})
	// From 01:30 EDT itself (what a worker does with an on-time fire) the
	// next fire is the next day.
	if n, _ := s.Next(time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)); !n.Equal(time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC)) {
		t.Errorf("next(01:30 EDT) = %v, want November 2 01:30 EST", n.In(ny))
	}
	// But asked from a time between the two 01:30s, next returns the
	// second one (01:30 EST): it is a legitimate match of the cron, so
	// next is right; see TestPlanFireDSTFallBackLate for where it hurts.
	for _, ref := range []time.Time{
		time.Date(2026, 11, 1, 5, 45, 0, 0, time.UTC), // 01:45 EDT
		time.Date(2026, 11, 1, 6, 15, 0, 0, time.UTC), // 01:15 EST
	} {
		if n, _ := s.Next(ref); !n.Equal(time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC)) {
			t.Errorf("next(%v) = %v, want November 1 01:30 EST", ref.In(ny), n.In(ny))
		}
	}
}

// A shared tick memo answers exactly as computing every time, whichever
// order the fires ask in.
func TestTickMemoSameAsGronx(t *testing.T) {
	t.Parallel()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip(err)
	}
	plain, err := Parse("*/7 * * * * *", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	memo := plain
	memo.memo = &tickMemo{}
	base := time.Date(2026, 3, 29, 0, 59, 50, 0, loc) // across a DST jump
	for _, d := range []int{0, 0, 1, 1, 0, 13, 7, 7, 3600, 3601, 0} {
		at := base.Add(time.Duration(d) * time.Second)
		want, okW := plain.Next(at)
		got, okG := memo.Next(at)
		if !got.Equal(want) || okG != okW {
			t.Fatalf("next(%v) with memo = %v %v, want %v %v", at, got, okG, want, okW)
		}
	}
}

// TestParseAliasesAndZones: @midnight is @daily, and TZ= sets the zone as
// CRON_TZ= does (issue 30, item 12).
func TestParseAliasesAndZones(t *testing.T) {
	from := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	mid := mustSchedule(t, "@midnight", "")
	if got, _ := mid.Next(from); !got.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("@midnight after %v: %v", from, got)
	}
	for _, expr := range []string{"TZ=Asia/Tokyo 0 9 * * *", "CRON_TZ=Asia/Tokyo 0 9 * * *"} {
		s := mustSchedule(t, expr, "Europe/Paris")
		if got, _ := s.Next(from); !got.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) { // 09:00 in Tokyo
			t.Fatalf("%s after %v: %v", expr, from, got)
		}
	}
	if _, err := Parse("TZ=Asia/Tokyo", ""); err == nil || !strings.Contains(err.Error(), "TZ but no fields") {
		t.Fatalf("TZ= alone: %v", err)
	}
}

// TestParseNamesTheBadField: a cron error names the field and its value.
func TestParseNamesTheBadField(t *testing.T) {
	for expr, want := range map[string]string{
		"0 61 * * * *":     `minute field "61"`,
		"61 * * * *":       `minute field "61"`,
		"0 0 25 * * *":     `hour field "25"`,
		"* * 32 * *":       `day of month field "32"`,
		"* * * 13 *":       `month field "13"`,
		"* * * * mon-xyz":  `day of week field "mon-xyz"`,
		"* * * *":          "has 4 fields",
		"@fortnightly":     "unknown macro",
		"* * * * * * 20x6": `year field "20x6"`,
	} {
		_, err := Parse(expr, "")
		if !errors.Is(err, ErrInvalidCron) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want it to say %s", expr, err, want)
		}
	}
}

// TestScheduleDomOrDow: with both day of month and day of week restricted,
// a day matching either fires, as in Vixie cron: "0 0 13 * 5" fires every
// Friday and every 13th.
func TestScheduleDomOrDow(t *testing.T) {
	s := mustSchedule(t, "0 0 13 * 5", "")
	got := walkFires(t, s, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 4)
	sameTimes(t, "Friday or the 13th", got, []time.Time{
		time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC),  // Friday
		time.Date(2026, 12, 11, 0, 0, 0, 0, time.UTC), // Friday
		time.Date(2026, 12, 13, 0, 0, 0, 0, time.UTC), // Sunday the 13th
		time.Date(2026, 12, 18, 0, 0, 0, 0, time.UTC), // Friday
	})
}

// TestWindow: a window keeps the fires within [start, end]: the first
// fire at or after start, none after end, and Prev bounded alike.
func TestWindow(t *testing.T) {
	s, err := Parse("0 */10 * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	w := s.Window(base.Add(15*time.Minute), base.Add(40*time.Minute))
	for _, c := range []struct {
		after time.Time
		want  time.Time // zero: none
	}{
		{base, base.Add(20 * time.Minute)},                       // before start: the first at or after it
		{base.Add(20 * time.Minute), base.Add(30 * time.Minute)}, // inside
		{base.Add(30 * time.Minute), base.Add(40 * time.Minute)}, // the end itself is in
		{base.Add(40 * time.Minute), time.Time{}},                // past the end: done
	} {
		got, ok := w.Next(c.after)
		if ok != !c.want.IsZero() || !got.Equal(c.want) {
			t.Errorf("Next(%s) = %s, %v; want %s", c.after.Format("15:04"), got.Format("15:04"), ok, c.want.Format("15:04"))
		}
	}
	if fires := w.Fires(base, 10); len(fires) != 3 {
		t.Errorf("Fires in the window = %v, want 3 (:20, :30, :40)", fires)
	}
	if p, ok := w.Prev(base.Add(2 * time.Hour)); !ok || !p.Equal(base.Add(40*time.Minute)) {
		t.Errorf("Prev after the end = %s, %v; want the last fire in the window", p, ok)
	}
	if _, ok := w.Prev(base.Add(16 * time.Minute)); ok {
		t.Errorf("Prev before the first fire in the window: want none")
	}
	start := s.Window(base.Add(15*time.Minute), time.Time{})
	if n, ok := start.Next(base.Add(5 * time.Hour)); !ok || !n.Equal(base.Add(5*time.Hour+10*time.Minute)) {
		t.Errorf("open end: Next = %s, %v", n, ok)
	}
}

// TestJitterOf: the same fire gets the same delay; fires of many tasks
// spread over the whole range; no delay reaches max.
func TestJitterOf(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	if a, b := JitterOf("report", at, time.Minute), JitterOf("report", at, time.Minute); a != b {
		t.Fatalf("one fire, two delays: %v, %v", a, b)
	}
	if JitterOf("report", at, 0) != 0 || JitterOf("report", at, time.Microsecond) != 0 {
		t.Error("no jitter asked, a delay given")
	}
	var buckets [10]int
	for i := range 10000 {
		d := JitterOf(fmt.Sprintf("task-%05d", i), at, 10*time.Second)
		if d < 0 || d >= 10*time.Second || d%time.Millisecond != 0 {
			t.Fatalf("delay %v out of [0, 10s) or not whole milliseconds", d)
		}
		buckets[d/time.Second]++
	}
	for i, n := range buckets {
		if n < 800 || n > 1200 {
			t.Errorf("second %d of the range got %d of 10000 fires, want about 1000: %v", i, n, buckets)
		}
	}
	if JitterOf("report", at, time.Minute) == JitterOf("report", at.Add(time.Hour), time.Minute) &&
		JitterOf("report", at.Add(2*time.Hour), time.Minute) == JitterOf("report", at.Add(3*time.Hour), time.Minute) {
		t.Error("the delay does not change from fire to fire")
	}
}
