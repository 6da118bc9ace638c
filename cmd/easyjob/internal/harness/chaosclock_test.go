package harness

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"
)

func TestFormatFakeOffset(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "+0"},
		{5 * time.Second, "+5"},
		{-5 * time.Second, "-5"},
		{30 * time.Second, "+30"},
		{250 * time.Millisecond, "+0.25"},
		{-1500 * time.Millisecond, "-1.5"},
		{time.Nanosecond, "+0"}, // below libfaketime's microseconds
	} {
		if got := formatFakeOffset(c.d); got != c.want {
			t.Errorf("formatFakeOffset(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// The clock-step fault takes its turn after the others, and its steps
// alternate forward and back so the offset returns to zero.
func TestClockStepRotation(t *testing.T) {
	o := chaosOpts{clockStep: 5 * time.Second, silentPath: time.Second, warmup: time.Second, faultEvery: time.Second}
	if got, want := faultKinds(o), []string{"kill", "freeze", "silent-path", "clock-step"}; !slices.Equal(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &chaosRun{o: o, end: t0.Add(30 * time.Second)}
	r.schedule(t0, 4*time.Second) // tail 5s + 4s + 4s: faults at 1 s .. 17 s
	var kinds []string
	for _, ev := range r.todo {
		kinds = append(kinds, ev.what)
	}
	if len(kinds) != 17 || kinds[3] != "clock-step" || kinds[7] != "clock-step" || kinds[8] != "kill" {
		t.Fatalf("schedule %v", kinds)
	}
	var offs []time.Duration
	var off time.Duration
	for range 4 {
		off = nextClockOffset(off, o.clockStep)
		offs = append(offs, off)
	}
	if want := []time.Duration{5 * time.Second, 0, 5 * time.Second, 0}; !slices.Equal(offs, want) {
		t.Fatalf("offsets %v, want %v", offs, want)
	}
}

// clockFires is one every-second task across a +5 s step of the database's
// clock at 10.5 s and a -5 s step at 30.5 s (local), fired the way the
// nodes do: fires already queued when the clock steps keep their old
// local times, the ones a forward step made due run at once, and after
// the step back the task waits until the database's clock is past the
// fire times it already ran. gapAfterBack adds silence after the back step.
func clockFires(base time.Time, gapAfterBack float64) []fire {
	at := func(s float64) int64 { return base.Add(time.Duration(s * float64(time.Second))).UnixNano() }
	var fires []fire
	add := func(sched int, start float64) {
		fires = append(fires, fire{Task: "t00000", Sched: at(float64(sched)), Start: at(start), Proc: 0, Node: 1})
	}
	for s := 1; s <= 12; s++ { // 11 and 12 were queued before the step: 5 s late on the new clock
		add(s, float64(s)+0.001)
	}
	for s := 13; s <= 17; s++ { // made due by the step: caught up at once
		add(s, 12.2)
	}
	for s := 18; s <= 36; s++ { // 5 s ahead; 36 was queued before the step back: 5 s early
		add(s, float64(s-5)+0.001)
	}
	for s := 37; s <= 50; s++ {
		add(s, float64(s)+gapAfterBack+0.001)
	}
	return fires
}

func TestAnalyzeClockSteps(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p := nodeParams{Tasks: 1, Cron: "* * * * * *", Heartbeat: time.Second, DeadAfter: 3 * time.Second}
	steps := []*fault{
		{Kind: "clock-step", At: base.Add(10500 * time.Millisecond), step: 5 * time.Second},
		{Kind: "clock-step", At: base.Add(30500 * time.Millisecond), step: -5 * time.Second},
	}
	analyze := func(fires []fire, withSteps bool) *chaosResult {
		res := &chaosResult{procNames: []string{"p0.0"}, Faults: steps}
		if withSteps {
			res.clockSteps = clockStepsOf(res.Faults)
		}
		analyzeChaos(res, fires, p, base.Add(3*time.Second), base.Add(45*time.Second), 4*time.Second)
		return res
	}

	res := analyze(clockFires(base, 0), true)
	if res.Duplicates != 0 || res.Lost != 0 || res.ClockHeld != 1 || !res.LostDetails[0].ClockBack {
		t.Fatalf("duplicates %d, lost %d, held %d: %+v", res.Duplicates, res.Lost, res.ClockHeld, res.LostDetails)
	}
	// The lag outside the settling windows is on the database's clock:
	// a millisecond, not -5 s.
	if res.Lag.Min < 0.5 || res.Lag.Max > 1.5 || res.StepFires == 0 {
		t.Fatalf("lag %+v, %d fires settling", res.Lag, res.StepFires)
	}
	if res.EarlyFires != 1 || res.EarliestMS > -4990 {
		t.Fatalf("early fires %d, earliest %v ms", res.EarlyFires, res.EarliestMS)
	}
	fwd, back := steps[0], steps[1]
	if fwd.AfterStep.N != 1 || fwd.AfterStep.Max > 600 || fwd.StepLag.Max < 4990 {
		t.Fatalf("forward step: first fire %+v, lag %+v", fwd.AfterStep, fwd.StepLag)
	}
	if back.StepLag.Min > -4990 {
		t.Fatalf("back step: lag %+v", back.StepLag)
	}

	// Without the steps the same silence is a lost fire, and a silence
	// longer than the threshold plus the step is lost despite them.
	if res := analyze(clockFires(base, 0), false); res.Lost != 1 || res.ClockHeld != 0 {
		t.Fatalf("no steps: lost %d held %d", res.Lost, res.ClockHeld)
	}
	if res := analyze(clockFires(base, 4), true); res.Lost != 1 || res.ClockHeld != 0 {
		t.Fatalf("long silence: lost %d held %d", res.Lost, res.ClockHeld)
	}
}

// The private server's clock follows the offset file at once, open
// connections included, and stop removes everything.
func TestFakeClockServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	lib, err := findLibfaketime()
	if err != nil {
		t.Skip(err)
	}
	if _, err := findPGBin("initdb"); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s, err := startFakeClockServer(ctx, lib)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			s.stop()
		}
	}()
	for _, want := range []time.Duration{0, 5 * time.Second, -1500 * time.Millisecond, 0} {
		if err := s.setOffset(want); err != nil {
			t.Fatal(err)
		}
		lo, hi, err := measureOffset(ctx, s.dsn)
		if err != nil {
			t.Fatal(err)
		}
		if want < lo-clockCheckSlack || want > hi+clockCheckSlack {
			t.Errorf("offset %v: the server's clock is [%v, %v] off", want, lo, hi)
		}
	}
	s.stop()
	stopped = true
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", s.dir, err)
	}
}
