package runlog

import (
	"log/slog"
	"testing"
)

// BenchmarkLogLine is one line through a run's logger: the cost a job
// pays per line (kept, not echoed).
func BenchmarkLogLine(b *testing.B) {
	l := New(Key{Task: "t"}, 1<<30, slog.LevelInfo, nil, nil)
	log := Logger(l)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		log.Info("bench line", "i", i)
	}
}

// BenchmarkSilentRun is what a run that logs nothing costs: its log,
// made and read at its end.
func BenchmarkSilentRun(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		l := New(Key{Task: "t"}, 0, slog.LevelInfo, nil, nil)
		_ = l.Text()
	}
}
