package schedule

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestScheduleMidnightGap: where clocks spring forward at midnight (the
// day has no 00:00), a cron that fires on later days still gets its next
// fire. gronx alone gave up ("tried so hard"), and the task stopped for
// good (issue 30, item 4).
func TestScheduleMidnightGap(t *testing.T) {
	for _, c := range []struct {
		expr, tz string
		from     time.Time
		want     string // local wall time
	}{
		{"0 0 9 10 * *", "America/Santiago", time.Date(2025, 8, 20, 12, 0, 0, 0, time.UTC), "2025-09-10 09:00:00 -03"},
		{"0 9 10 * *", "America/Havana", time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC), "2026-03-10 09:00:00 CDT"},
		{"0 0 * * *", "America/Sao_Paulo", time.Date(2018, 11, 3, 12, 0, 0, 0, time.UTC), "2018-11-05 00:00:00 -02"},
		{"30 0 * * *", "America/Santiago", time.Date(2025, 9, 6, 12, 0, 0, 0, time.UTC), "2025-09-08 00:30:00 -03"},
	} {
		s := mustSchedule(t, c.expr, c.tz)
		got, ok := s.Next(c.from)
		if !ok || got.In(s.Location()).Format("2006-01-02 15:04:05 MST") != c.want {
			t.Errorf("%s in %s after %v: %v %v, want %s", c.expr, c.tz, c.from, got.In(s.Location()), ok, c.want)
		}
		if p, ok := s.Prev(got); !ok || !p.Equal(got) {
			t.Errorf("%s in %s: Prev(%v) = %v %v, want itself", c.expr, c.tz, got, p, ok)
		}
	}
}

// TestScheduleAgainstBruteForceEveryZone: in every zone of the tz
// database, around every transition from 2018 to 2027, Next of a few
// daily and monthly crons equals the first minute after the reference
// whose wall clock matches, found by walking minute by minute: a wall
// time that does not exist (clocks spring forward) is skipped, and of one
// that occurs twice (clocks set back) the first is the fire. Where the
// reference lies between the two, the wall time fired already and the
// second is left out (TestScheduleDSTFallBack says what Next does there).
func TestScheduleAgainstBruteForceEveryZone(t *testing.T) {
	zones := tzZones(t)
	if testing.Short() {
		zones = []string{"America/Santiago", "America/Havana", "America/New_York", "Australia/Lord_Howe", "Asia/Tehran"}
	}
	type daily struct{ dom, h, m int } // dom 0: every day
	specs := []daily{{0, 0, 0}, {0, 0, 30}, {0, 2, 30}, {0, 9, 0}, {10, 9, 0}}
	cases := 0
	for _, zone := range zones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			continue
		}
		for _, tr := range transitions(loc, time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC)) {
			for _, sp := range specs {
				expr := "0 " + itoa(sp.m) + " " + itoa(sp.h) + " " + domField(sp.dom) + " * *"
				s, err := Parse(expr, zone)
				if err != nil {
					t.Fatalf("%s %s: %v", zone, expr, err)
				}
				for _, ref := range []time.Time{tr.Add(-90 * time.Minute), tr.Add(-26 * time.Hour)} {
					want := bruteNext(loc, ref, sp.dom, sp.h, sp.m)
					if secondOccurrence(loc, want) {
						continue // the wall time fired already: see TestScheduleDSTFallBack
					}
					cases++
					if got, ok := s.Next(ref); !ok || !got.Equal(want) {
						t.Errorf("%s %q after %v: got %v (%v), want %v", zone, expr, ref.In(loc), got.In(loc), ok, want.In(loc))
					}
				}
			}
		}
	}
	t.Logf("%d zones, %d cases", len(zones), cases)
}

// bruteNext walks minute by minute from after ref to the first instant
// whose wall clock in loc is day dom (0: any), h:m.
func bruteNext(loc *time.Location, ref time.Time, dom, h, m int) time.Time {
	at := ref.Truncate(time.Minute).Add(time.Minute)
	for {
		w := at.In(loc)
		if w.Hour() == h && w.Minute() == m && (dom == 0 || w.Day() == dom) {
			return at
		}
		if dom != 0 && w.Day() != dom && w.Day() != dom-1 {
			// Far from the day: jump a day, landing before it again.
			at = at.Add(23 * time.Hour)
			continue
		}
		at = at.Add(time.Minute)
	}
}

// secondOccurrence reports that at's wall clock also occurred within the
// few hours before it (clocks were set back in between).
func secondOccurrence(loc *time.Location, at time.Time) bool {
	w := wallClock(at.In(loc))
	for back := time.Minute; back <= 4*time.Hour; back += time.Minute {
		if wallClock(at.Add(-back).In(loc)).Equal(w) {
			return true
		}
	}
	return false
}

// transitions lists the instants in [from, to) at which loc's offset
// changes, to the minute.
func transitions(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	_, off := from.In(loc).Zone()
	for at := from; at.Before(to); at = at.Add(time.Hour) {
		if _, o := at.In(loc).Zone(); o != off {
			lo := at.Add(-time.Hour)
			for lo.Add(time.Minute).Before(at) {
				mid := lo.Add(at.Sub(lo) / 2).Truncate(time.Minute)
				if _, mo := mid.In(loc).Zone(); mo == off {
					lo = mid
				} else {
					at = mid
				}
			}
			out = append(out, at)
			off = o
		}
	}
	return out
}

// tzZones lists the zones of the system's tz database.
func tzZones(t *testing.T) []string {
	root := "/usr/share/zoneinfo"
	var zones []string
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		name := strings.TrimPrefix(path, root+"/")
		if strings.ContainsAny(name[:1], "abcdefghijklmnopqrstuvwxyz") || strings.HasPrefix(name, "posix") || strings.HasPrefix(name, "right") || strings.Contains(name, ".") {
			return nil
		}
		zones = append(zones, name)
		return nil
	})
	if len(zones) == 0 {
		t.Skip("no tz database at " + root)
	}
	return zones
}

func itoa(n int) string { return strconv.Itoa(n) }

func domField(dom int) string {
	if dom == 0 {
		return "*"
	}
	return strconv.Itoa(dom)
}

// TestPrevDSTFallBack: around a set-back, Prev names the fires Next
// gives: the first of a repeated wall time, never the second.
func TestPrevDSTFallBack(t *testing.T) {
	s, err := Parse("0 30 2 * * *", "Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	utc := func(v string) time.Time { x, _ := time.Parse(time.RFC3339, v); return x }
	for _, c := range []struct{ at, want string }{
		{"2026-10-25T00:29:59Z", "2026-10-24T00:30:00Z"}, // 02:29:59 CEST, before the first 02:30
		{"2026-10-25T00:30:00Z", "2026-10-25T00:30:00Z"}, // the first 02:30 (CEST)
		{"2026-10-25T01:45:00Z", "2026-10-25T00:30:00Z"}, // 02:45 CET, after the second 02:30: not a fire
		{"2026-10-26T01:29:59Z", "2026-10-25T00:30:00Z"}, // the next day, before its 02:30
	} {
		got, ok := s.Prev(utc(c.at))
		if !ok || !got.Equal(utc(c.want)) {
			t.Errorf("Prev(%s) = %s %v; want %s", c.at, got.Format(time.RFC3339), ok, c.want)
		}
	}
	// Next and Prev agree on each fire of the week around the change.
	for at := utc("2026-10-22T00:00:00Z"); at.Before(utc("2026-10-29T00:00:00Z")); {
		n, ok := s.Next(at)
		if !ok {
			t.Fatal("no next fire")
		}
		if p, ok := s.Prev(n); !ok || !p.Equal(n) {
			t.Errorf("Prev(Next(%s) = %s) = %s", at.Format(time.RFC3339), n.Format(time.RFC3339), p.Format(time.RFC3339))
		}
		if p, ok := s.Prev(n.Add(-time.Second)); ok && !p.Before(n) {
			t.Errorf("Prev(%s - 1s) = %s, not before it", n.Format(time.RFC3339), p.Format(time.RFC3339))
		}
		at = n
	}
}
