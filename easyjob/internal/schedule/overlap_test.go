package schedule

import (
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestOverlap drives every policy through a run of the every-second cron
// that began at 10:00:00 and ended at 10:00:03.5: the fires of :01, :02
// and :03 came due while it ran.
func TestOverlap(t *testing.T) {
	s, err := Parse("* * * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	at := func(sec float64) time.Time {
		return time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC).Add(time.Duration(sec * float64(time.Second)))
	}
	plan := Plan{Run: true, Next: at(1)} // PlanFire's: the fire after :00
	for _, tc := range []struct {
		policy   repository.OverlapPolicy
		buffered bool    // the run was itself a buffered fire found at :00
		end      float64 // when the run ended
		next     float64
		buf      bool
		dropped  int
	}{
		{repository.OverlapWait, false, 3.5, 1, false, 0},
		{repository.OverlapSkip, false, 0.5, 1, false, 0}, // no overlap: as planned
		{repository.OverlapSkip, false, 3.5, 4, false, 3},
		{repository.OverlapBufferOne, false, 3.5, 1, true, 2},
		{repository.OverlapBufferAll, false, 3.5, 1, true, 0},
		{repository.OverlapCancel, false, 1.2, 1, true, 0},
		{repository.OverlapTerminate, false, 3.5, 1, true, 2},
		// A buffered run found at :00 (its own fire earlier): the fires due
		// before it started were dropped already; :01 is the next.
		{repository.OverlapBufferOne, true, 0.5, 1, false, 0},
	} {
		o := repository.TaskOptions{Overlap: tc.policy}
		p, buf, dropped := Overlap(s, o, plan, at(0), at(tc.end), tc.buffered)
		if !p.Next.Equal(at(tc.next)) || buf != tc.buf || dropped != tc.dropped {
			t.Errorf("%s (buffered %v) ending at +%vs: next %s buffered %v dropped %d; want +%vs %v %d",
				tc.policy, tc.buffered, tc.end, p.Next.Format("15:04:05.000"), buf, dropped, tc.next, tc.buf, tc.dropped)
		}
	}

	// A buffered fire of buffer_one whose plan points before it started:
	// the next is the first fire after it was found.
	p, buf, _ := Overlap(s, repository.TaskOptions{Overlap: repository.OverlapBufferOne}, Plan{Run: true, Next: at(-5)}, at(0), at(0.3), true)
	if !p.Next.Equal(at(1)) || buf {
		t.Errorf("buffered run: next %s buffered %v; want 10:00:01, not buffered", p.Next.Format(time.RFC3339), buf)
	}

	// Buffer all keeps the newest BufferLimit fires of a long overrun.
	long := at(float64(repository.BufferLimit) + 10.5)
	p, buf, dropped := Overlap(s, repository.TaskOptions{Overlap: repository.OverlapBufferAll}, plan, at(0), long, false)
	if want := at(11); !p.Next.Equal(want) || !buf || dropped != 10 {
		t.Errorf("buffer all over %d fires: next %s buffered %v dropped %d; want %s, true, 10",
			repository.BufferLimit+10, p.Next.Format(time.RFC3339), buf, dropped, want.Format(time.RFC3339))
	}

	// A plan with no next fire stays so.
	if p, _, _ := Overlap(s, repository.TaskOptions{Overlap: repository.OverlapSkip}, Plan{Run: true, Done: true}, at(0), at(9), false); !p.Done {
		t.Error("a done plan came back with a next fire")
	}
}
