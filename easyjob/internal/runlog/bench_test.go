package runlog

import (
	"io"
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

// BenchmarkRunOfFiveLines is a run that writes five lines, kept: its log
// made (echoing to a process log that keeps warnings, as a node's does
// by default), its logger, the lines, the text its finish stores.
func BenchmarkRunOfFiveLines(b *testing.B) {
	echo := slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})
	b.ReportAllocs()
	for b.Loop() {
		l := New(Key{Task: "t"}, 0, slog.LevelInfo, echo, nil)
		log := Logger(l)
		for i := range 5 {
			log.Info("bench line", "i", i, "of", 5)
		}
		_ = l.End()
	}
}

// BenchmarkDiscardedFiveLines is the same five lines through a text
// handler that discards them: what a job pays for its lines whether or
// not they are kept.
func BenchmarkDiscardedFiveLines(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		for i := range 5 {
			log.Info("bench line", "i", i, "of", 5)
		}
	}
}
