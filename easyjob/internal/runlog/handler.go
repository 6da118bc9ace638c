package runlog

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Handler is the log/slog handler of a run's logger: each record becomes
// one logfmt line in the run's Log, byte for byte what slog's
// TextHandler writes (format.go), and goes to the log's echo handler too
// when that logs its level.
//
// A job's lines are written while it holds its worker, in the burst of
// fires at the top of a second: the line is formatted straight into the
// log's buffer, and a run makes no handler of its own (no TextHandler, no
// echo handler with the task's name) until a line needs one.
type Handler struct {
	log    *Log
	pre    []byte  // attributes of WithAttrs, formatted, each after a space
	prefix string  // groups of WithGroup, each followed by a dot: the prefix of later keys
	echo   *echoOf // nil: no echo
}

// NewHandler returns the handler writing to l (and echoing to its echo
// with the task's name).
func NewHandler(l *Log) *Handler {
	if l.echo == nil {
		return &Handler{log: l}
	}
	// One allocation for the handler and its echo.
	r := &struct {
		h Handler
		e echoOf
	}{e: echoOf{root: l.echo, task: l.Run.Task}}
	r.h = Handler{log: l, echo: &r.e}
	return &r.h
}

// Logger returns a logger writing to l.
func Logger(l *Log) *slog.Logger { return slog.New(NewHandler(l)) }

// keeps reports whether records of level are kept.
func (h *Handler) keeps(level slog.Level) bool { return h.log.limit >= 0 && level >= h.log.level }

// Enabled reports whether level is kept or echoed.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.keeps(level) || (h.echo != nil && h.echo.root.Enabled(ctx, level))
}

// Handle keeps r as one line and echoes it. The log's lock is held
// across the formatting so that each line reaches the log whole.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	// In UTC (the line writes milliseconds and the zone): the lines of
	// runs on nodes in different zones read alike.
	r.Time = r.Time.UTC()
	if h.echo != nil && h.echo.root.Enabled(ctx, r.Level) {
		_ = h.echo.handler().Handle(ctx, r.Clone()) // the process's log failing must not fail the job's
	}
	if !h.keeps(r.Level) {
		return nil
	}
	l := h.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return nil // a line of a goroutine the job left running: its run's log is stored
	}
	if len(l.buf)+longLine <= l.limit {
		// Room for any but a long line: formatted in place.
		if l.buf == nil {
			l.buf = make([]byte, 0, min(512, l.limit)) // a few lines before it grows
		}
		start := len(l.buf)
		l.buf = appendRecord(l.buf, r, h.pre, h.prefix)
		l.wrote(start)
		return nil
	}
	// Near the limit: formatted aside, kept if it fits.
	p := scratch.Get().(*[]byte)
	*p = appendRecord((*p)[:0], r, h.pre, h.prefix)
	l.write(*p)
	if cap(*p) <= 64<<10 {
		scratch.Put(p)
	}
	return nil
}

// longLine is the length of line past which one formatted in place may
// take the log past its limit (and is then taken back: Log.wrote).
const longLine = 4 << 10

// scratch holds the buffers of lines formatted near a log's limit.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// WithAttrs returns a handler adding attrs to each line.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if countEmptyGroups(attrs) == len(attrs) {
		return h
	}
	c := *h
	c.pre = appendAttrs(h.pre[:len(h.pre):len(h.pre)], attrs, h.prefix)
	if h.echo != nil {
		c.echo = &echoOf{root: h.echo.root, parent: h.echo, attrs: attrs}
	}
	return &c
}

// WithGroup returns a handler qualifying later attributes by name.
func (h *Handler) WithGroup(name string) slog.Handler {
	c := *h
	c.prefix = h.prefix + name + "."
	if h.echo != nil {
		c.echo = &echoOf{root: h.echo.root, parent: h.echo, group: name, isGroup: true}
	}
	return &c
}

// echoOf is the process's log as a run's handler (or one derived from it by
// WithAttrs or WithGroup) sees it, made on the first line echoed: the
// run's task name is added, and the derivations applied, only for runs
// whose lines the process's log keeps.
type echoOf struct {
	root    slog.Handler // the node's echo: what levels it logs
	parent  *echoOf      // nil: the run's own, with the task's name
	task    string
	attrs   []slog.Attr
	group   string
	isGroup bool

	once sync.Once
	h    slog.Handler
}

// handler returns the echo handler, made on the first call.
func (e *echoOf) handler() slog.Handler {
	e.once.Do(func() {
		switch {
		case e.parent == nil && e.task != "":
			e.h = e.root.WithAttrs([]slog.Attr{slog.String("task", e.task)})
		case e.parent == nil:
			e.h = e.root
		case e.isGroup:
			e.h = e.parent.handler().WithGroup(e.group)
		default:
			e.h = e.parent.handler().WithAttrs(e.attrs)
		}
	})
	return e.h
}
