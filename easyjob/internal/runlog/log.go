package runlog

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
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

// write appends one formatted line; mu is held (Handler.Handle).
func (l *Log) write(p []byte) {
	if l.limit < 0 {
		return
	}
	if l.buf == nil {
		l.buf = make([]byte, 0, min(max(4*len(p), 512), l.limit)) // a few lines before it grows
	}
	if len(l.buf)+len(p) > l.limit {
		l.cut++
		l.cutB += len(p)
		return
	}
	l.buf = append(l.buf, p...)
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
