package schedule

import (
	"errors"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

func TestAtFiresOnce(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	s, err := Parse("@at 2026-11-26T10:00:00Z", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := s.OneOff(); !ok || !got.Equal(at) {
		t.Fatalf("OneOff = %v, %v; want %v", got, ok, at)
	}
	if next, ok := s.Next(at.Add(-time.Hour)); !ok || !next.Equal(at) {
		t.Fatalf("Next before = %v, %v; want %v", next, ok, at)
	}
	if next, ok := s.Next(at); ok || !next.IsZero() {
		t.Fatalf("Next at the fire = %v, %v: a second fire (none is the zero time, as for every schedule)", next, ok)
	}
	if prev, ok := s.Prev(at.Add(time.Minute)); !ok || !prev.Equal(at) {
		t.Fatalf("Prev after = %v, %v", prev, ok)
	}
	if prev, ok := s.Prev(at.Add(-time.Second)); ok || !prev.IsZero() {
		t.Fatalf("Prev before the fire = %v, %v", prev, ok)
	}
	// On time: runs, and the task is done. Late with Skip: no run, done.
	o := repository.TaskOptions{Misfire: repository.MisfireSkip, MisfireThreshold: DefaultMisfireThreshold}
	if p := PlanFire(s, o, at, at.Add(time.Second)); !p.Run || !p.Done || !p.Next.IsZero() {
		t.Fatalf("on time: %+v, want a run, done, and no next fire", p)
	}
	if p := PlanFire(s, o, at, at.Add(time.Hour)); p.Run || !p.Done {
		t.Fatalf("late, skip: %+v, want no run and done", p)
	}
	o.Misfire = repository.MisfireFireOnceNow
	if p := PlanFire(s, o, at, at.Add(time.Hour)); !p.Run || !p.Done {
		t.Fatalf("late, fire once now: %+v, want a run and done", p)
	}
}

func TestAtZones(t *testing.T) {
	s, err := Parse("@at 2026-07-01T09:30:00", "Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	if at, _ := s.OneOff(); !at.Equal(time.Date(2026, 7, 1, 7, 30, 0, 0, time.UTC)) {
		t.Fatalf("a time without offset in Europe/Paris: %v", at)
	}
	for _, bad := range []string{"@at", "@at tomorrow", "@at 2026-11-26T10:00:00Z extra", "@at 2026-13-01T00:00:00Z"} {
		if _, err := Parse(bad, ""); !errors.Is(err, ErrInvalidCron) {
			t.Errorf("Parse(%q) = %v, want ErrInvalidCron", bad, err)
		}
	}
}
