package runlog

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unsafe"
)

// DefaultLimit bounds the text kept per run when the node is not told
// otherwise.
const DefaultLimit = 64 << 10

// Log is one run's captured lines: the first Limit bytes of whole lines,
// and a count of the lines (and bytes) past it. Safe for concurrent use:
// a job may log from goroutines of its own, and the node reads it to
// store it while the job runs.
type Log struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	cut     int // lines past the limit
	cutB    int // their bytes
	written int // bytes of buf already handed out by Changed
	level   slog.Level
	echo    slog.Handler // nil: lines are only kept
	first   func(*Log)   // called once, on the first line kept
	firstOK bool
	ended   bool // End was called: lines are no longer kept
	// Run is the run the log is of.
	Run Key
}

// Key names the run a log is of: its task and its start key (how its
// execution row is found).
type Key struct {
	Task        string
	TaskID      int64
	ScheduledAt time.Time
	Attempt     int
	Batch       int64
}

// New returns an empty log of run keeping the records at level or
// above, at most limit bytes of them (DefaultLimit when limit is 0, none
// when it is below 0: the records are only echoed).
// echo, when not nil, gets every record too, with the task's name (the
// node's own logger); first, when not nil, is called once when the first
// line is kept (the node starts storing the log of a running job).
func New(run Key, limit int, level slog.Level, echo slog.Handler, first func(*Log)) *Log {
	if limit == 0 {
		limit = DefaultLimit
	}
	return &Log{Run: run, limit: limit, level: level, echo: echo, first: first}
}

// wrote keeps the line Handle appended to buf at start, or takes it back
// and counts it when it passes the limit; mu is held.
func (l *Log) wrote(start int) {
	if len(l.buf) > l.limit {
		n := len(l.buf) - start
		l.buf = l.buf[:start]
		if cap(l.buf) > l.limit {
			// A long line grew the buffer past the limit: the run keeps
			// no more than its limit while it goes on.
			l.buf = append(make([]byte, 0, l.limit), l.buf...)
		}
		l.cut++
		l.cutB += n
		return
	}
	l.kept()
}

// write appends one formatted line, or counts it when it would pass the
// limit; mu is held.
func (l *Log) write(p []byte) {
	if len(l.buf)+len(p) > l.limit {
		l.cut++
		l.cutB += len(p)
		return
	}
	l.buf = append(l.buf, p...)
	l.kept()
}

// kept notes that a line was kept: the first calls first.
func (l *Log) kept() {
	if !l.firstOK {
		l.firstOK = true
		if l.first != nil {
			l.first(l)
		}
	}
}

// Text returns what is kept, followed by a line counting what was cut,
// if anything was.
func (l *Log) Text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text()
}

// End returns the text, as Text, to store with the run's finish; the
// lines written after it are not kept (nor stored: the finish has the
// log). The text is the log's buffer itself, not a copy.
func (l *Log) End() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	if l.cut == 0 {
		return unsafe.String(unsafe.SliceData(l.buf), len(l.buf)) // never written again
	}
	return l.text()
}

func (l *Log) text() string {
	if l.cut == 0 {
		return string(l.buf)
	}
	return string(l.buf) + fmt.Sprintf("[easyjob: %d more lines (%d bytes) cut: a run keeps %d bytes of log]\n", l.cut, l.cutB, l.limit)
}

// Unstored undoes the last Changed: its text was not stored (the run's
// start not recorded yet), so the next Changed returns it again.
func (l *Log) Unstored() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.written = -1
}

// Changed returns the text when lines were written since the last call
// that returned true, so a running job's log is stored only when it grew.
func (l *Log) Changed() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.buf) + l.cutB
	if n == l.written {
		return "", false
	}
	l.written = n
	return l.text(), true
}
