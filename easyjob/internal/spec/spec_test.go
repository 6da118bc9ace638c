package spec

import (
	"errors"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

func TestScheduleOf(t *testing.T) {
	reg, err := schedule.Parse("*/5 * * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	s := &Spec{Name: "report", Cron: "*/5 * * * * *", Sched: reg}
	at := time.Date(2026, 11, 26, 10, 0, 1, 0, time.UTC)

	got, err := s.ScheduleOf(&repository.Task{Cron: s.Cron})
	if err != nil || got != &s.Sched {
		t.Fatalf("registered cron: got %p, %v; want the spec's own schedule", got, err)
	}

	got, err = s.ScheduleOf(&repository.Task{Cron: "*/7 * * * * *"})
	if next, _ := got.Next(at); err != nil || !next.Equal(at.Add(6*time.Second)) {
		t.Fatalf("rescheduled row: next %v, %v; want the row's cron (%v)", next, err, at.Add(6*time.Second))
	}

	got, err = s.ScheduleOf(&repository.Task{Cron: "not a cron"})
	if !errors.Is(err, schedule.ErrInvalidCron) || got != &s.Sched {
		t.Fatalf("invalid stored cron: got %p, %v; want the registered schedule and ErrInvalidCron", got, err)
	}

	every, _ := schedule.Parse("@every 10s", "")
	a := &Spec{Name: "a", Cron: "@every 10s", Sched: every, Opts: repository.TaskOptions{EveryFromCreation: true}}
	got, _ = a.ScheduleOf(&repository.Task{Cron: a.Cron, CreatedAt: at.Add(3 * time.Second)})
	if next, _ := got.Next(at.Add(5 * time.Second)); !next.Equal(at.Add(13 * time.Second)) {
		t.Fatalf("anchored at creation: next %v, want %v", next, at.Add(13*time.Second))
	}
}
