package easyjob

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/repository/memory"
)

// recordHandler keeps the records it handles.
type recordHandler struct {
	level slog.Level
	mu    sync.Mutex
	recs  []slog.Record
}

func (h *recordHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordHandler) records() []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.recs)
}

func attrsOf(r slog.Record) map[string]slog.Value {
	out := map[string]slog.Value{}
	r.Attrs(func(a slog.Attr) bool { out[a.Key] = a.Value; return true })
	return out
}

func TestSlogBridge(t *testing.T) {
	h := &recordHandler{level: slog.LevelInfo}
	cfg := Config{Slog: slog.New(h)}.withDefaults()
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	log := cfg.Logger.With().Str("group", "g").Logger()
	if log.GetLevel() != zerolog.InfoLevel {
		t.Fatalf("bridge level %v: events below the handler's level should not be built", log.GetLevel())
	}
	log.Debug().Msg("dropped")
	log.Warn().Err(errors.New("boom")).Str("task", "x").Int("attempt", 2).Float64("ratio", 0.5).Bool("ok", false).
		Dur("took", 1500*time.Millisecond).Msg("easyjob: job failed")
	log.Error().Msg("bad")
	recs := h.records()
	if len(recs) != 2 {
		t.Fatalf("records: %v", recs)
	}
	r := recs[0]
	if r.Level != slog.LevelWarn || r.Message != "easyjob: job failed" {
		t.Fatalf("record %v %q", r.Level, r.Message)
	}
	var keys []string
	r.Attrs(func(a slog.Attr) bool { keys = append(keys, a.Key); return true })
	if want := []string{"group", "error", "task", "attempt", "ratio", "ok", "took"}; !slices.Equal(keys, want) {
		t.Fatalf("attribute order %v, want %v", keys, want)
	}
	a := attrsOf(r)
	if a["error"].String() != "boom" || a["task"].String() != "x" || a["attempt"].Int64() != 2 ||
		a["ratio"].Float64() != 0.5 || a["ok"].Bool() || a["took"].Kind() != slog.KindInt64 {
		t.Fatalf("attributes %v", a)
	}
	if recs[1].Level != slog.LevelError {
		t.Fatalf("error mapped to %v", recs[1].Level)
	}
}

func TestSlogLevels(t *testing.T) {
	for zl, want := range map[zerolog.Level]slog.Level{
		zerolog.TraceLevel: slog.LevelDebug - 4, zerolog.DebugLevel: slog.LevelDebug, zerolog.InfoLevel: slog.LevelInfo,
		zerolog.WarnLevel: slog.LevelWarn, zerolog.ErrorLevel: slog.LevelError, zerolog.FatalLevel: slog.LevelError + 4,
		zerolog.PanicLevel: slog.LevelError + 4, zerolog.NoLevel: slog.LevelInfo,
	} {
		if got := slogLevel(zl); got != want {
			t.Errorf("%v → %v, want %v", zl, got, want)
		}
	}
	// A plain Write (no level writer) reads the level from the event; a
	// line that is not JSON is kept as the message.
	h := &recordHandler{level: slog.LevelDebug - 4}
	w := slogWriter{h: h}
	_, _ = w.Write([]byte(`{"level":"debug","message":"m","n":1}`))
	_, _ = w.Write([]byte("not json\n"))
	recs := h.records()
	if len(recs) != 2 || recs[0].Level != slog.LevelDebug || recs[0].Message != "m" || recs[1].Message != "not json" {
		t.Fatalf("records %v", recs)
	}
	if l := slogBridge(&recordHandler{level: slog.LevelError + 8}).GetLevel(); l != zerolog.Disabled {
		t.Fatalf("a handler that enables nothing: level %v", l)
	}
}

func TestLoggerChoice(t *testing.T) {
	zl := zerolog.Nop()
	sl := slog.New(&recordHandler{})
	if _, err := New(Config{Logger: &zl, Slog: sl}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("both loggers: %v, want ErrInvalidConfig", err)
	}
	if _, err := NewClient(context.Background(), Config{Logger: &zl, Slog: sl}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("client with both loggers: %v, want ErrInvalidConfig", err)
	}
	if got := (Config{Logger: &zl}).withDefaults().Logger; got != &zl {
		t.Fatal("a zerolog logger must be used as given")
	}
	// Neither: warnings and errors reach stderr.
	def := Config{}.withDefaults()
	if def.Logger.GetLevel() != zerolog.WarnLevel {
		t.Fatalf("default logger level %v, want warn", def.Logger.GetLevel())
	}
	// A defaulted config stays valid when defaulted again.
	twice := Config{Slog: sl}.withDefaults().withDefaults()
	if err := twice.validate(); err != nil {
		t.Fatal(err)
	}
}

// TestSlogRuntime runs a failing job: its failure reaches the slog
// handler with the task and the error as attributes.
func TestSlogRuntime(t *testing.T) {
	h := &recordHandler{level: slog.LevelInfo}
	cfg := fastConfig(memory.New(), groupFor(t))
	cfg.Slog = slog.New(h)
	start(t, cfg, func(s *Scheduler) {
		if err := s.Register("fails", "* * * * * *", func(context.Context) error { return errors.New("boom") }); err != nil {
			t.Fatal(err)
		}
	})
	waitFor(t, 10*time.Second, "a job failure logged through slog", func() bool {
		for _, r := range h.records() {
			a := attrsOf(r)
			if r.Message == "easyjob: job failed" && r.Level == slog.LevelWarn && a["task"].String() == "fails" && a["error"].String() == "boom" {
				return true
			}
		}
		return false
	})
}
