package runlog

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestLogKeepsLinesUpToItsLimitAndCountsTheRest(t *testing.T) {
	var firsts int
	l := New(Key{}, 100, slog.LevelInfo, nil, func(*Log) { firsts++ })
	log := Logger(l)
	log.Debug("not kept")
	if _, ok := l.Changed(); ok {
		t.Fatal("a debug line below the level changed the log")
	}
	for i := 0; i < 10; i++ {
		log.Info("line", "i", i)
	}
	text := l.Text()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	kept := len(lines) - 1 // the last counts the cut
	if kept < 1 || !strings.Contains(lines[0], "level=INFO msg=line i=0") {
		t.Fatalf("first line %q", lines[0])
	}
	if want := "[easyjob: "; !strings.HasPrefix(lines[len(lines)-1], want) ||
		!strings.Contains(lines[len(lines)-1], " more lines (") {
		t.Fatalf("no cut line: %q", text)
	}
	if got := len(text) - len(lines[len(lines)-1]) - 1; got > 100 {
		t.Fatalf("kept %d bytes past the limit of 100", got)
	}
	if firsts != 1 {
		t.Fatalf("first called %d times, want 1", firsts)
	}
}

func TestLogChangedOnlyWhenItGrew(t *testing.T) {
	l := New(Key{}, 0, slog.LevelDebug, nil, nil)
	log := Logger(l)
	if _, ok := l.Changed(); ok {
		t.Fatal("an empty log changed")
	}
	log.Info("a")
	if s, ok := l.Changed(); !ok || !strings.Contains(s, "msg=a") {
		t.Fatalf("Changed = %q, %v", s, ok)
	}
	if _, ok := l.Changed(); ok {
		t.Fatal("changed again without a line")
	}
	log.With("k", "v").WithGroup("g").Warn("b", "x", 1)
	if s, ok := l.Changed(); !ok || !strings.Contains(s, "level=WARN msg=b k=v g.x=1") {
		t.Fatalf("Changed = %q, %v", s, ok)
	}
}

func TestLogEchoesEachLineWithItsLevel(t *testing.T) {
	echo := &countHandler{got: map[slog.Level]int{}}
	l := New(Key{Task: "t"}, 1<<20, slog.LevelDebug, echo, nil)
	log := Logger(l)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				log.Info("i")
				log.Error("e")
			}
		}()
	}
	wg.Wait()
	if echo.got[slog.LevelInfo] != 800 || echo.got[slog.LevelError] != 800 || echo.attrs != 1600 {
		t.Fatalf("echoed %v with %d task attributes", echo.got, echo.attrs)
	}
	if n := strings.Count(l.Text(), "\n"); n != 1600 {
		t.Fatalf("%d lines kept, want 1600", n)
	}
}

// countHandler counts the records echoed to it, by level, and those that
// carry the attributes of WithAttrs.
type countHandler struct {
	mu    sync.Mutex
	got   map[slog.Level]int
	attrs int
	with  bool
	root  *countHandler
}

func (h *countHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *countHandler) Handle(_ context.Context, r slog.Record) error {
	root := h
	if h.root != nil {
		root = h.root
	}
	root.mu.Lock()
	defer root.mu.Unlock()
	root.got[r.Level]++
	if h.with {
		root.attrs++
	}
	return nil
}

func (h *countHandler) WithAttrs([]slog.Attr) slog.Handler {
	root := h
	if h.root != nil {
		root = h.root
	}
	return &countHandler{with: true, root: root}
}

func (h *countHandler) WithGroup(string) slog.Handler { return h }
