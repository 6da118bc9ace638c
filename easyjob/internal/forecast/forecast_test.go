package forecast

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/calendar"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

var from = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC) // a Monday, on the hour

func task(name, cron string, o repository.TaskOptions) *repository.Task {
	return &repository.Task{Name: name, Cron: cron, Options: o, Status: repository.TaskPending}
}

func forecast(t *testing.T, horizon time.Duration, tasks ...*repository.Task) Result {
	t.Helper()
	f, err := New(from, horizon)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tasks {
		f.Add(x)
	}
	return f.Result()
}

// TestForecastStorm: 100 tasks on "0 * * * *" fire 100 at a time in 24
// seconds of the day; the busiest is the first, the per-hour buckets
// hold 100 each.
func TestForecastStorm(t *testing.T) {
	var ts []*repository.Task
	for i := range 100 {
		ts = append(ts, task(fmt.Sprintf("t%d", i), "0 * * * *", repository.TaskOptions{}))
	}
	r := forecast(t, 24*time.Hour, ts...)
	if r.Total != 2400 || len(r.Seconds) != 24 || r.Tasks != 100 {
		t.Fatalf("total %d in %d seconds of %d tasks, want 2400 in 24 of 100", r.Total, len(r.Seconds), r.Tasks)
	}
	if p := r.Peaks(3); len(p) != 3 || p[0] != (Second{from, 100}) || p[1] != (Second{from.Add(time.Hour), 100}) {
		t.Errorf("peaks %v, want 100 at %v then an hour later", p, from)
	}
	b := r.Buckets(time.Hour)
	if len(b) != 24 || b[0] != 100 || b[23] != 100 {
		t.Errorf("hourly buckets %v", b)
	}
	if m := r.Buckets(time.Minute); len(m) != 1440 || m[0] != 100 || m[1] != 0 || m[60] != 100 {
		t.Errorf("minute buckets: %d of them, [0]=%d [1]=%d [60]=%d", len(m), m[0], m[1], m[60])
	}
}

// TestForecastSpread: with Spread(1h) each task fires at the hour + its
// own offset, so the storm's 100 fires a second become a few.
func TestForecastSpread(t *testing.T) {
	var ts []*repository.Task
	want := map[time.Time]int{}
	for i := range 100 {
		name := fmt.Sprintf("t%d", i)
		ts = append(ts, task(name, "0 * * * *", repository.TaskOptions{Spread: time.Hour}))
		off := schedule.SpreadOf(name, time.Hour)
		for h := range 24 {
			at := from.Add(time.Duration(h)*time.Hour + off).Truncate(time.Second)
			if off > 0 && h == 23 {
				// its fire at 09:00 + offset the next day falls past the horizon; the
				// one at 09:00 + offset today does not count either (before from)
				continue
			}
			want[at]++
		}
	}
	r := forecast(t, 24*time.Hour, ts...)
	got := map[time.Time]int{}
	for _, s := range r.Seconds {
		got[s.At] = s.Fires
	}
	// The fires at 09:00 + offset (before from) are out, those at
	// 10:00 + offset to 09:00 + offset next day (in) are in.
	for i := range 100 {
		off := schedule.SpreadOf(fmt.Sprintf("t%d", i), time.Hour)
		if off > 0 {
			want[from.Add(23*time.Hour+off).Truncate(time.Second)]++
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d seconds with fires, want %d", len(got), len(want))
	}
	for at, n := range want {
		if got[at] != n {
			t.Errorf("%v: %d fires, want %d", at, got[at], n)
		}
	}
	if p := r.Peaks(1); p[0].Fires > 3 {
		t.Errorf("busiest second has %d fires: not spread", p[0].Fires)
	}
	if r.Total != 2400 {
		t.Errorf("total %d, want 2400 (each task 24 fires a day)", r.Total)
	}
}

// TestForecastJitter: a jittered fire counts at its delayed second.
func TestForecastJitter(t *testing.T) {
	o := repository.TaskOptions{Jitter: 30 * time.Second, Spread: 10 * time.Second}
	r := forecast(t, time.Hour, task("j", "*/10 * * * *", o))
	if r.Total != 6 || len(r.Seconds) != 6 {
		t.Fatalf("total %d in %d seconds, want 6", r.Total, len(r.Seconds))
	}
	off := schedule.SpreadOf("j", 10*time.Second)
	for i, s := range r.Seconds {
		at := from.Add(time.Duration(i)*10*time.Minute + off)
		if want := at.Add(schedule.JitterOf("j", at, 30*time.Second)).Truncate(time.Second); !s.At.Equal(want) {
			t.Errorf("fire %d at %v, want %v", i, s.At, want)
		}
	}
}

// TestForecastLeavesOut: paused, pausing, finished tasks and chain steps
// add nothing; a cron in a zone this host lacks is skipped; a window
// bounds the fires.
func TestForecastLeavesOut(t *testing.T) {
	paused := task("p", "* * * * *", repository.TaskOptions{})
	paused.Status = repository.TaskPaused
	pausing := task("q", "* * * * *", repository.TaskOptions{})
	pausing.Status, pausing.Paused = repository.TaskDoing, true
	finished := task("f", "* * * * *", repository.TaskOptions{})
	finished.Status = repository.TaskFinished
	child := task("c", "* * * * *", repository.TaskOptions{})
	child.ParentID = 7
	chainStep := task("s", "", repository.TaskOptions{})
	chainStep.ParentID = 7
	badZone := task("z", "* * * * *", repository.TaskOptions{Timezone: "Nowhere/Atlantis"})
	window := task("w", "* * * * *", repository.TaskOptions{Start: from.Add(10 * time.Minute), End: from.Add(19 * time.Minute)})
	doing := task("d", "0 * * * *", repository.TaskOptions{})
	doing.Status = repository.TaskDoing
	r := forecast(t, time.Hour, paused, pausing, finished, child, chainStep, badZone, window, doing)
	if r.Tasks != 2 || r.Skipped != 1 || r.Total != 11 {
		t.Errorf("tasks %d, skipped %d, total %d: want 2 counted (the windowed and the doing one), 1 skipped, 10+1 fires", r.Tasks, r.Skipped, r.Total)
	}
}

// TestForecastEveryAndZones: @every on its grid (anchored at creation
// when asked) and a cron read in its zone.
func TestForecastEveryAndZones(t *testing.T) {
	created := from.Add(-7*time.Second - 300*time.Millisecond)
	anchored := task("a", "@every 1m", repository.TaskOptions{EveryFromCreation: true})
	anchored.CreatedAt = created
	r := forecast(t, 10*time.Minute,
		anchored,
		task("e", "@every 5m", repository.TaskOptions{}),
		task("tokyo", "0 0 19 * * *", repository.TaskOptions{Timezone: "Asia/Tokyo"}), // 10:00 UTC
	)
	if r.Total != 10+2+1 {
		t.Fatalf("total %d, want 13: %v", r.Total, r.Seconds)
	}
	if r.Seconds[0] != (Second{from, 2}) || r.Seconds[1] != (Second{from.Add(52 * time.Second), 1}) {
		t.Errorf("first seconds %v, want 2 at %v (@every 5m, Tokyo's 19:00), 1 at :52 (anchored at its creation, 09:59:52.7, to the second)", r.Seconds[:2], from)
	}
}

func TestForecastHorizon(t *testing.T) {
	for _, h := range []time.Duration{0, -time.Hour, MaxHorizon + time.Second} {
		if _, err := New(from, h); !errors.Is(err, ErrHorizon) {
			t.Errorf("New(%v) = %v, want ErrHorizon", h, err)
		}
	}
	f, err := New(from.Add(300*time.Millisecond), 1500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	f.Add(task("s", "* * * * * *", repository.TaskOptions{}))
	if r := f.Result(); !r.From.Equal(from) || r.Horizon != 2*time.Second || r.Total != 2 {
		t.Errorf("from %v, horizon %v, total %d: want %v, 2s, 2 (whole seconds)", r.From, r.Horizon, r.Total, from)
	}
}

// TestForecastMillion: a million schedules, mostly on a few crons (some
// spread, some jittered) and ten thousand on their own daily times,
// forecast over 24 h within seconds.
func TestForecastMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("a million tasks")
	}
	f, err := New(from, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	crons := []string{"0 * * * *", "*/5 * * * *", "0 0 * * *", "30 */15 * * * *", "@every 90s"}
	start := time.Now()
	const n = 1_000_000
	var x repository.Task
	for i := range n {
		x = repository.Task{Name: fmt.Sprintf("t%07d", i), Status: repository.TaskPending, Cron: crons[i%len(crons)]}
		switch {
		case i%100 == 0:
			x.Cron = fmt.Sprintf("%d %d %d * * *", i%60, (i/60)%60, (i/3600)%24)
		case i%100 == 1:
			x.Options.Jitter = 30 * time.Second
		case i%2 == 0:
			x.Options.Spread = 10 * time.Minute
		}
		f.Add(&x)
	}
	r := f.Result()
	took := time.Since(start)
	t.Logf("%d tasks, %d fires in %d seconds, forecast in %v", r.Tasks, r.Total, len(r.Seconds), took)
	if r.Tasks != n || r.Total == 0 {
		t.Fatalf("tasks %d, total %d", r.Tasks, r.Total)
	}
	if took > 2*time.Minute {
		t.Errorf("a million tasks took %v", took)
	}
}

// TestForecastSpreadWindow: a window (whole seconds, as stored) bounds
// the moved fires exactly, though offsets fold to their seconds.
func TestForecastSpreadWindow(t *testing.T) {
	name := "w"
	off := schedule.SpreadOf(name, time.Minute)
	if off%time.Second == 0 {
		t.Fatalf("offset %v is whole seconds: pick a name with a fraction", off)
	}
	first := from.Add(off) // 10:00 + off, the first moved fire in the horizon
	sec := first.Truncate(time.Second)
	for _, c := range []struct {
		start, end time.Time
		want       int64
	}{
		{sec, time.Time{}, 60},                           // starts in the fire's second, before it
		{sec.Add(time.Second), time.Time{}, 59},          // starts after it
		{time.Time{}, sec, 0},                            // ends before it, in its second
		{time.Time{}, sec.Add(time.Second), 1},           // ends after it
		{sec, sec.Add(10*time.Minute + time.Second), 11}, // 10:00+off .. 10:10+off
	} {
		o := repository.TaskOptions{Spread: time.Minute, Start: c.start, End: c.end}
		r := forecast(t, time.Hour, task(name, "* * * * *", o), task(name+"2", "* * * * *", o))
		var mine int64
		for _, s := range r.Seconds {
			if s.At.Sub(sec)%time.Minute == 0 {
				mine += int64(s.Fires)
			}
		}
		if mine != c.want {
			t.Errorf("window [%v, %v]: %d fires at its offset, want %d", c.start, c.end, mine, c.want)
		}
	}
}

// TestForecastCalendar: the fires a task's calendar excludes are not
// counted; another task's are.
func TestForecastCalendar(t *testing.T) {
	from := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC) // a Friday
	f, err := New(from, 72*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	set, errs := calendar.NewSet([]repository.Calendar{{Name: "weekends", Crons: []string{"* * * * 0,6"}}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	f.Calendars(set)
	f.Add(&repository.Task{Name: "a", Cron: "0 0 9 * * *", Status: repository.TaskPending, Options: repository.TaskOptions{Calendar: "weekends"}})
	f.Add(&repository.Task{Name: "b", Cron: "0 0 9 * * *", Status: repository.TaskPending})
	if r := f.Result(); r.Total != 4 { // a: Friday only; b: Friday, Saturday, Sunday
		t.Errorf("total %d, want 4 (the weekend's fires of the task with the calendar skipped)", r.Total)
	}
}
