package alerting

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// TestFirePathFree: what a node calls on its fire path (a fire's start,
// its finish's row) allocates nothing and sends nothing when nothing
// happened: no rule watches the task, or a rule does and the fire was on
// time and succeeded with no alert open.
func TestFirePathFree(t *testing.T) {
	for _, c := range []struct {
		name  string
		rules []alert.Rule
	}{
		{"no rules", nil},
		{"rules of other tasks", norm(t, alert.Rule{Kind: alert.Late, Task: "other", After: time.Second}, alert.Rule{Kind: alert.Failure, Task: "other"})},
		{"rules of the task", norm(t, alert.Rule{Kind: alert.Late, Task: "t", After: time.Second}, alert.Rule{Kind: alert.Missed, Task: "t"},
			alert.Rule{Kind: alert.Failure}, alert.Rule{Kind: alert.ConsecutiveFailures, Count: 3}, alert.Rule{Kind: alert.Deadman, After: time.Hour})},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(Config{Group: "g", Rules: c.rules, Logger: zerolog.Nop()}, &fakeStore{Store: memory.New()})
			row := repository.Task{Name: "t", LastStatus: repository.ExecSucceeded}
			at := time.Now()
			allocs := testing.AllocsPerRun(1000, func() {
				s.Started("t", at, time.Millisecond, false)
				s.Finished(row, at)
			})
			if allocs != 0 || len(s.in) != 0 {
				t.Fatalf("%v allocations a fire, %d observations sent; want none", allocs, len(s.in))
			}
		})
	}
}

// BenchmarkFirePath is the cost a fire pays for alerts (a start and a
// finish) with rules on its task and nothing to report.
func BenchmarkFirePath(b *testing.B) {
	s := New(Config{Group: "g", Rules: []alert.Rule{{Name: "late", Kind: alert.Late, After: time.Second}, {Name: "f", Kind: alert.Failure}},
		Logger: zerolog.Nop()}, &fakeStore{Store: memory.New()})
	row := repository.Task{Name: "t", LastStatus: repository.ExecSucceeded}
	at := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		s.Started("t", at, time.Millisecond, false)
		s.Finished(row, at)
	}
}
