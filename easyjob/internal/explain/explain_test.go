package explain

import (
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/calendar"
	"github.com/easyjob-go/easyjob/repository"
)

var t0 = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func hourly() repository.Task {
	return repository.Task{
		Name: "report", Cron: "0 0 * * * *", CodeCron: "0 0 * * * *", Status: repository.TaskPending,
		CreatedAt: t0.Add(-24 * time.Hour), NextStartTime: t0.Add(3 * time.Hour),
	}
}

func TestAt(t *testing.T) {
	resched := hourly()
	resched.Cron = "0 30 * * * *"
	dyn := hourly()
	dyn.Dynamic, dyn.Handler = true, "mail"
	stale := hourly()
	stale.StaleSince = t0.Add(-time.Hour)
	skipping, buffering := hourly(), hourly()
	skipping.Options.Overlap, buffering.Options.Overlap = repository.OverlapSkip, repository.OverlapBufferOne
	for _, c := range []struct {
		name      string
		f         Facts
		at        time.Time
		fire      time.Time
		scheduled bool
		want      string // in the verdict
	}{
		{"ran", Facts{Task: hourly(), Runs: []repository.Execution{{
			NodeID: 7, ScheduledAt: t0, StartedAt: t0.Add(2 * time.Millisecond), FinishedAt: t0.Add(time.Second),
			Status: repository.ExecSucceeded, Attempt: 1, Kind: repository.RunCron,
		}}}, t0, t0, true, "ran on node-7 (node 7), started 2ms after its fire, succeeded after 998ms"},
		{"between fires", Facts{Task: hourly()}, t0.Add(10 * time.Minute), t0, false, "is not a fire of \"0 0 * * * *\""},
		{"before creation", Facts{Task: hourly()}, t0.Add(-48 * time.Hour), time.Time{}, false, "did not exist yet"},
		{"future", Facts{Task: hourly(), Now: t0}, t0.Add(time.Hour), t0.Add(time.Hour), true, "still to come"},
		{"paused then", Facts{Task: hourly(), Now: t0.Add(time.Hour), Audit: []repository.AuditEntry{
			{Action: "resume", At: t0.Add(30 * time.Minute), Actor: repository.Actor{Name: "bob", Via: "cli"}},
			{Action: "pause", At: t0.Add(-30 * time.Minute), Actor: repository.Actor{Name: "alice", Via: "dashboard"}},
		}}, t0, t0, true, "paused then (paused at 2026-11-26T09:30:00Z by alice via dashboard)"},
		{"resumed before", Facts{Task: hourly(), Now: t0.Add(time.Hour), Audit: []repository.AuditEntry{
			{Action: "resume", At: t0.Add(-10 * time.Minute)}, {Action: "pause", At: t0.Add(-30 * time.Minute)},
		}}, t0, t0, true, "no run recorded"},
		{"stale then", Facts{Task: stale, Now: t0.Add(time.Hour)}, t0, t0, true, "no live node registered the task then"},
		{"rescheduled after", Facts{Task: resched, Now: t0.Add(time.Hour), Revisions: []repository.Revision{
			{Revision: 2, Cron: "0 30 * * * *", ChangedAt: t0.Add(5 * time.Minute)},
		}}, t0, t0, true, "no run recorded"},
		{"rescheduled before", Facts{Task: resched, Now: t0.Add(time.Hour), Revisions: []repository.Revision{
			{Revision: 2, Cron: "0 30 * * * *", ChangedAt: t0.Add(-5 * time.Minute)},
		}}, t0, t0.Add(-30 * time.Minute), false, "not a fire of \"0 30 * * * *\""},
		{"schedule created later", Facts{Task: dyn, Revisions: []repository.Revision{
			{Revision: 1, Cron: "0 0 * * * *", ChangedAt: t0.Add(time.Minute)},
		}}, t0, time.Time{}, false, "did not exist yet"},
		{"abandoned", Facts{Task: hourly(), Runs: []repository.Execution{{
			NodeID: 3, ScheduledAt: t0, StartedAt: t0, FinishedAt: t0.Add(4 * time.Second), Status: repository.ExecAbandoned, Attempt: 1,
		}}}, t0, t0, true, "died while running it"},
		{"misfire skip", Facts{Task: hourly(), Runs: []repository.Execution{{
			ScheduledAt: t0, StartedAt: t0.Add(time.Minute), Status: repository.ExecSkipped, Misfire: repository.MisfireSkip, Attempt: 1,
		}}}, t0, t0, true, "its misfire policy (skip) skipped it"},
		{"retried", Facts{Task: hourly(), Runs: []repository.Execution{
			{ScheduledAt: t0, StartedAt: t0.Add(time.Second), FinishedAt: t0.Add(2 * time.Second), Status: repository.ExecSucceeded, Attempt: 2, Kind: repository.RunRetry},
			{ScheduledAt: t0, StartedAt: t0, FinishedAt: t0.Add(time.Second), Status: repository.ExecFailed, Attempt: 1},
		}}, t0, t0, true, "(a retry run); 2 attempts in all"},
		{"overlap skipped", Facts{Task: skipping, Now: t0.Add(time.Hour), Covering: &repository.Execution{
			NodeID: 7, ScheduledAt: t0.Add(-time.Hour), StartedAt: t0.Add(-time.Hour), FinishedAt: t0.Add(5 * time.Minute), Status: repository.ExecSucceeded,
		}}, t0, t0, true, "still running on node-7 (node 7) (from 2026-11-26T09:00:00Z to 2026-11-26T10:05:00Z); the overlap policy skip dropped it"},
		{"no handler", Facts{Task: dyn, Now: t0.Add(time.Hour), Waiting: true}, t0, t0, true, "no live node has the task's handler \"mail\""},
		{"buffered", Facts{Task: buffering, Runs: []repository.Execution{{
			ScheduledAt: t0, StartedAt: t0.Add(10 * time.Minute), FinishedAt: t0.Add(11 * time.Minute), Status: repository.ExecSucceeded, Attempt: 1, Kind: repository.RunBuffered,
		}}}, t0, t0, true, "a buffered run: it came due while the previous run ran, and the overlap policy buffer_one ran it"},
		{"cancelled", Facts{Task: hourly(), Runs: []repository.Execution{{
			ScheduledAt: t0, StartedAt: t0, FinishedAt: t0.Add(time.Hour), Status: repository.ExecCancelled, Attempt: 1,
			Error: "cancelled: the fire of 2026-11-26T11:00:00Z came due (overlap policy cancel)",
		}}}, t0, t0, true, "cancelled after 1h0m0s: cancelled: the fire of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.f.Names = func(id repository.NodeID) string {
				if id == 7 {
					return "node-7"
				}
				return ""
			}
			a := At(c.f, c.at)
			if !a.Fire.Equal(c.fire) || a.Scheduled != c.scheduled || !strings.Contains(a.Verdict, c.want) {
				t.Errorf("At(%s) = fire %s scheduled %v %q; want fire %s scheduled %v, verdict with %q",
					c.at, a.Fire, a.Scheduled, a.Verdict, c.fire, c.scheduled, c.want)
			}
		})
	}
}

func TestAhead(t *testing.T) {
	paused := hourly()
	paused.Paused, paused.Status = true, repository.TaskPaused
	done := hourly()
	done.Status = repository.TaskFinished
	child := hourly()
	child.Cron = ""
	for _, c := range []struct {
		name           string
		task           repository.Task
		stale, waiting bool
		next           int
		blocked        string
	}{
		{"fires", hourly(), false, false, 10, ""},
		{"paused", paused, false, false, 0, "paused"},
		{"finished", done, false, false, 0, "finished"},
		{"stale", hourly(), true, false, 0, "stale"},
		{"waiting", hourly(), false, true, 10, "waiting"},
		{"chain step", child, false, false, 0, "chain step"},
	} {
		t.Run(c.name, func(t *testing.T) {
			next, blocked := Ahead(Facts{Task: c.task, Now: t0}, c.stale, c.waiting, 10)
			if len(next) != c.next || !strings.Contains(blocked, c.blocked) || (c.blocked == "") != (blocked == "") {
				t.Errorf("Ahead = %d fires, %q; want %d, %q", len(next), blocked, c.next, c.blocked)
			}
			if c.next > 1 && (!next[0].Equal(c.task.NextStartTime) || next[1].Sub(next[0]) != time.Hour) {
				t.Errorf("fires %v: want hourly from the next start time", next[:2])
			}
		})
	}
}

// TestAheadCalendar: the fires listed ahead leave out those the task's
// calendar excludes; a fire it skipped says so.
func TestAheadCalendar(t *testing.T) {
	task := hourly() // next at 13:00
	task.Options.Calendar = "lunch"
	set, errs := calendar.NewSet([]repository.Calendar{{Name: "lunch", Crons: []string{"* * 13,15 * * *"}}})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	next, blocked := Ahead(Facts{Task: task, Now: t0, Calendars: set}, false, false, 3)
	want := []time.Time{t0.Add(4 * time.Hour), t0.Add(6 * time.Hour), t0.Add(7 * time.Hour)}
	if blocked != "" || len(next) != 3 || !next[0].Equal(want[0]) || !next[1].Equal(want[1]) || !next[2].Equal(want[2]) {
		t.Errorf("Ahead = %v %q, want %v", next, blocked, want)
	}
	all, _ := calendar.NewSet([]repository.Calendar{{Name: "lunch", Crons: []string{"* * * * * *"}}})
	if next, blocked := Ahead(Facts{Task: task, Now: t0, Calendars: all}, false, false, 3); len(next) != 0 || !strings.Contains(blocked, "excludes every fire") {
		t.Errorf("Ahead with every fire excluded = %v %q", next, blocked)
	}
	a := At(Facts{Task: hourly(), Runs: []repository.Execution{{
		ScheduledAt: t0, StartedAt: t0, Status: repository.ExecSkipped, Attempt: 1, Error: `excluded by calendar "lunch" (cron * * 13,15 * * *)`,
	}}}, t0)
	if !strings.Contains(a.Verdict, `not run: excluded by calendar "lunch"`) {
		t.Errorf("verdict on an excluded fire: %q", a.Verdict)
	}
}

// TestAtWindow: a time before the task's window names the window's start;
// one after it names its end and the last fire in it.
func TestAtWindow(t *testing.T) {
	task := hourly()
	task.Options.Start, task.Options.End = t0.Add(-2*time.Hour), t0.Add(2*time.Hour)
	f := Facts{Task: task, Now: t0.Add(5 * time.Hour)}
	if a := At(f, t0.Add(-3*time.Hour)); !a.Fire.IsZero() || !strings.Contains(a.Verdict, "before the task's window, which starts at 2026-11-26T08:00:00Z") {
		t.Errorf("before the window: %+v", a)
	}
	a := At(f, t0.Add(4*time.Hour))
	if !a.Fire.Equal(t0.Add(2*time.Hour)) || a.Scheduled ||
		!strings.HasPrefix(a.Verdict, "2026-11-26T14:00:00Z is after the task's window, which ended at 2026-11-26T12:00:00Z; its last fire was 2026-11-26T12:00:00Z: ") {
		t.Errorf("after the window: %+v", a)
	}
}

// TestAheadMaxFires: the fires past a task's MaxFires are not listed, and
// the answer says when it ends.
func TestAheadMaxFires(t *testing.T) {
	task := hourly()
	task.Options.MaxFires, task.Fires = 5, 2
	next, blocked := Ahead(Facts{Task: task, Now: t0}, false, false, 10)
	if len(next) != 3 || !strings.Contains(blocked, "finishes after 3 more fire(s)") {
		t.Errorf("Ahead = %d fires, %q; want 3 and when it finishes", len(next), blocked)
	}
}
