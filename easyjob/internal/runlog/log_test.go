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
	mu      sync.Mutex
	got     map[slog.Level]int
	attrs   int
	with    bool
	root    *countHandler
	level   slog.Level // the lowest echoed
	derived int        // WithAttrs and WithGroup calls
}

func (h *countHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.rootOf().level }

func (h *countHandler) rootOf() *countHandler {
	if h.root != nil {
		return h.root
	}
	return h
}

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
	root := h.rootOf()
	root.mu.Lock()
	defer root.mu.Unlock()
	root.derived++
	return &countHandler{with: true, root: root}
}

func (h *countHandler) WithGroup(string) slog.Handler {
	root := h.rootOf()
	root.mu.Lock()
	defer root.mu.Unlock()
	root.derived++
	return h
}

func TestLogEndKeepsNoLaterLine(t *testing.T) {
	echo := &countHandler{got: map[slog.Level]int{}}
	l := New(Key{Task: "t"}, 0, slog.LevelInfo, echo, nil)
	log := Logger(l)
	log.Info("a")
	text := l.End()
	log.Info("b") // a goroutine the job left running
	if !strings.Contains(text, "msg=a") || strings.Count(text, "\n") != 1 {
		t.Fatalf("End = %q", text)
	}
	if got := l.Text(); got != text {
		t.Fatalf("kept %q after End, want %q", got, text)
	}
	if echo.got[slog.LevelInfo] != 2 {
		t.Fatalf("echoed %d lines, want 2 (the line after End too)", echo.got[slog.LevelInfo])
	}
}

func TestLogEchoIsMadeOnlyForLinesItLogs(t *testing.T) {
	echo := &countHandler{got: map[slog.Level]int{}, level: slog.LevelWarn}
	l := New(Key{Task: "t"}, 0, slog.LevelInfo, echo, nil)
	log := Logger(l).With("k", "v").WithGroup("g")
	log.Info("kept, not echoed")
	if echo.derived != 0 || len(echo.got) != 0 {
		t.Fatalf("an info line derived %d echo handlers and echoed %v", echo.derived, echo.got)
	}
	log.Warn("both", "x", 1)
	log.Error("both")
	// The task's name, With's attributes, the group: once each.
	if echo.derived != 3 || echo.got[slog.LevelWarn] != 1 || echo.got[slog.LevelError] != 1 || echo.attrs != 2 {
		t.Fatalf("derived %d echo handlers, echoed %v (%d with attributes)", echo.derived, echo.got, echo.attrs)
	}
	if n := strings.Count(l.Text(), "\n"); n != 3 {
		t.Fatalf("%d lines kept, want 3", n)
	}
}

func TestLogLongLinesNearTheLimit(t *testing.T) {
	l := New(Key{}, 6000, slog.LevelInfo, nil, nil)
	log := Logger(l)
	log.Info(strings.Repeat("x", 5000)) // formatted in place, past the limit's room
	log.Info("short")                   // formatted aside, fits
	log.Info(strings.Repeat("y", 5000)) // formatted aside, cut
	text := l.Text()
	if !strings.Contains(text, "msg=short") || strings.Contains(text, "yyy") || !strings.Contains(text, "[easyjob: 1 more lines") {
		t.Fatalf("text %q", text)
	}
	l = New(Key{}, 100, slog.LevelInfo, nil, nil)
	log = Logger(l)
	for range 3 {
		log.Info(strings.Repeat("z", 5000)) // each one cut
	}
	if text := l.Text(); !strings.HasPrefix(text, "[easyjob: 3 more lines") {
		t.Fatalf("text %q", text)
	}
}
