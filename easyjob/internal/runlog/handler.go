package runlog

import (
	"context"
	"log/slog"
	"time"
)

// Handler is the log/slog handler of a run's logger: each record becomes
// one logfmt line (slog's TextHandler) in the run's Log, and goes to the
// log's echo handler too when that keeps its level.
type Handler struct {
	log   *Log
	inner slog.Handler
	echo  slog.Handler
}

// NewHandler returns the handler writing to l (and echoing to its echo
// with the task's name).
func NewHandler(l *Log) *Handler {
	echo := l.echo
	if echo != nil && l.Run.Task != "" {
		echo = echo.WithAttrs([]slog.Attr{slog.String("task", l.Run.Task)})
	}
	level := slog.Leveler(l.level)
	if l.limit < 0 {
		level = slog.Level(1 << 30) // nothing kept
	}
	return &Handler{log: l, echo: echo, inner: slog.NewTextHandler(writer{l}, &slog.HandlerOptions{Level: level})}
}

// Logger returns a logger writing to l.
func Logger(l *Log) *slog.Logger { return slog.New(NewHandler(l)) }

// Enabled reports whether level is kept or echoed.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level) || (h.echo != nil && h.echo.Enabled(ctx, level))
}

// Handle keeps r as one line and echoes it. The log's lock is held
// across the formatting so that each line reaches the log whole.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	// In UTC (the text handler writes milliseconds and the zone): the
	// lines of runs on nodes in different zones read alike. A
	// ReplaceAttr doing it cost a time formatting and an allocation per
	// line.
	r.Time = r.Time.UTC()
	if h.echo != nil && h.echo.Enabled(ctx, r.Level) {
		_ = h.echo.Handle(ctx, r.Clone()) // the process's log failing must not fail the job's
	}
	if !h.inner.Enabled(ctx, r.Level) {
		return nil
	}
	h.log.mu.Lock()
	defer h.log.mu.Unlock()
	return h.inner.Handle(ctx, r)
}

// WithAttrs returns a handler adding attrs to each line.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(attrs)
	if h.echo != nil {
		c.echo = h.echo.WithAttrs(attrs)
	}
	return &c
}

// WithGroup returns a handler qualifying later attributes by name.
func (h *Handler) WithGroup(name string) slog.Handler {
	c := *h
	c.inner = h.inner.WithGroup(name)
	if h.echo != nil {
		c.echo = h.echo.WithGroup(name)
	}
	return &c
}

// writer is the TextHandler's output: the log, its lock already held.
type writer struct{ l *Log }

func (w writer) Write(p []byte) (int, error) {
	w.l.write(p)
	return len(p), nil
}
