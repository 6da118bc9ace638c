package harness

import (
	"testing"
	"time"
)

func TestAnalyzeSteady(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	exp, _ := cronTimes("* * * * * *", base, base.Add(4*time.Second)) // 0..4 s: 5 times
	var fires []fire
	for _, tm := range exp {
		fires = append(fires, fire{Task: "a", Sched: tm.UnixNano(), Start: tm.UnixNano() + 2e6})
		if tm.Second() != 3 {
			fires = append(fires, fire{Task: "b", Sched: tm.UnixNano(), Start: tm.UnixNano() + 1e6})
		}
	}
	fires = append(fires, fire{Task: "a", Sched: exp[1].UnixNano(), Start: exp[1].UnixNano() + 9e6})
	r := analyzeSteady(fires, []string{"a", "b"}, exp, base, base.Add(4*time.Second))
	if r.Expected != 10 || r.Missed != 1 || r.missedList[0].Task != "b" {
		t.Fatalf("%+v", r)
	}
	if r.Rate != 10.0/4 { // 10 fires scheduled in a 4 s window (one of them twice), not the run's total
		t.Fatalf("steady rate %v, want 2.5 fires/s", r.Rate)
	}
	d := duplicates(fires)
	if len(d) != 1 || d[0].Task != "a" || len(d[0].Runs) != 2 || d[0].Runs[0].Start > d[0].Runs[1].Start {
		t.Fatalf("%+v", d)
	}
}

// The steady window opens 3 s in, or at the tasks' first fire when that
// is later (new tasks first fire after their registration lead): seconds
// before it are not counted as missed, the first fire's own second is.
func TestSteadyWindowOpensAtTheFirstFire(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	tEnd := t0.Add(20 * time.Second)
	at := func(d time.Duration) []fire { return []fire{{Task: "t", Sched: t0.Add(d).UnixNano()}} }

	from, to := steadyWindow(t0, tEnd, at(time.Second), false)
	if !from.Equal(t0.Add(steadyStart)) || !to.Equal(tEnd.Add(-steadyEndMargin)) {
		t.Fatalf("early first fire: window %v..%v, want 3 s in to 2 s before the end", from.Sub(t0), to.Sub(t0))
	}
	if from, _ := steadyWindow(t0, tEnd, at(5*time.Second), false); !from.Equal(t0.Add(5 * time.Second)) {
		t.Fatalf("first fire 5 s in: window opens %v in, want 5s", from.Sub(t0))
	}
	if from, _ := steadyWindow(t0, tEnd, nil, false); !from.Equal(t0.Add(steadyStart)) {
		t.Fatalf("no fire at all: window opens %v in, want 3s (every fire missed)", from.Sub(t0))
	}
	if from, _ := steadyWindow(t0, tEnd, at(5*time.Second), true); !from.Equal(t0.Add(6 * time.Second)) {
		t.Fatalf("from start: window opens %v in, want the second after the first fire", from.Sub(t0))
	}
}

// TestAnalyzeSteadyShifted: with spread tasks each fire is expected at
// the cron time + the task's offset, those moved out of the window are
// not expected, and the peak second is the busiest one's lag.
func TestAnalyzeSteadyShifted(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	offs := map[string]time.Duration{"a": 1500 * time.Millisecond, "b": 1500 * time.Millisecond, "c": 3 * time.Second}
	exp, _ := cronTimes("*/2 * * * * *", base.Add(-3*time.Second), base.Add(4*time.Second)) // -2, 0, 2, 4
	var fires []fire
	for task, off := range offs {
		for _, tm := range exp {
			at := tm.Add(off)
			if at.Before(base) || at.After(base.Add(4*time.Second)) || (task == "c" && tm.Equal(base)) {
				continue // c's fire at 0 + 3 s is missed
			}
			fires = append(fires, fire{Task: task, Sched: at.UnixNano(), Start: at.UnixNano() + int64(len(task))*1e6})
		}
	}
	r := analyzeSteadyShifted(fires, []string{"a", "b", "c"}, exp, base, base.Add(4*time.Second), func(task string) time.Duration { return offs[task] })
	// a, b: 1.5 s, 3.5 s; c: 1 s, 3 s (missed).
	if r.Expected != 6 || r.Missed != 1 || r.missedList[0].Task != "c" {
		t.Fatalf("expected %d, missed %d (%v): want 6, 1 of c", r.Expected, r.Missed, r.missedList)
	}
	if r.Peak == nil || r.Peak.Fires != 3 || !r.Peak.At.Equal(base.Add(time.Second)) {
		t.Fatalf("peak %+v: want 3 fires in second 1 (a's and b's at 1.5 s, c's at 1 s; second 3 lost c's)", r.Peak)
	}
}
