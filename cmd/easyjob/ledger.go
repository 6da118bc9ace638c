package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// fire is one run of a bench job as the ledger saw it.
type fire struct {
	Task    string
	Sched   int64 // scheduled time (the fire time, database clock), unix nanos
	Node    int64 // node id (database)
	Start   int64 // when the job started (local clock), unix nanos
	Attempt int
	Exec    int64 // execution id; 0 while easyjob.Info does not carry it
	Version int64 // fencing token version (Info.Token.Version): a re-run of a fire has a larger one
	Proc    int   // which process incarnation wrote it (index into the run's list); 0 in-process
}

// Lag is the start lag versus the scheduled time.
func (f fire) Lag() time.Duration { return time.Duration(f.Start - f.Sched) }

// ledger records fires. It never touches the scheduler's database.
type ledger interface {
	record(f fire)
}

// fireFromContext builds the ledger entry of the running job.
func fireFromContext(ctx context.Context) fire {
	start := time.Now().UnixNano()
	info, _ := easyjob.InfoFromContext(ctx)
	return fire{
		Task: info.Task, Sched: info.ScheduledAt.UnixNano(), Node: info.NodeID,
		Start: start, Attempt: info.Attempt, Version: info.Token.Version,
	}
}

// ledgerJob is the near-instant job of every bench task: it records the fire.
func ledgerJob(l ledger) easyjob.Func {
	return func(ctx context.Context) error {
		l.record(fireFromContext(ctx))
		return nil
	}
}

// memLedger keeps fires in memory (in-process nodes).
type memLedger struct {
	mu    sync.Mutex
	fires []fire
}

func (m *memLedger) record(f fire) {
	m.mu.Lock()
	m.fires = append(m.fires, f)
	m.mu.Unlock()
}

func (m *memLedger) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.fires)
}

func (m *memLedger) snapshot() []fire {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]fire(nil), m.fires...)
}

// fileLedger appends one line per fire to a file opened with O_APPEND, one
// write(2) per line: a line is either wholly in the file or not at all, and
// everything written survives a SIGKILL of the process.
type fileLedger struct {
	f    *os.File
	mu   sync.Mutex // only guards err
	err  error
	bufs sync.Pool
}

func openFileLedger(path string) (*fileLedger, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &fileLedger{f: f, bufs: sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}}, nil
}

// appendLine formats f as "task sched node start attempt exec version\n"
// (times in unix nanoseconds).
func appendLine(b []byte, f fire) []byte {
	b = append(b, f.Task...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, f.Sched, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, f.Node, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, f.Start, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(f.Attempt), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, f.Exec, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, f.Version, 10)
	return append(b, '\n')
}

func (l *fileLedger) record(f fire) {
	bp := l.bufs.Get().(*[]byte)
	b := appendLine((*bp)[:0], f)
	_, err := l.f.Write(b) // one write(2): O_APPEND makes it atomic for a regular file
	*bp = b
	l.bufs.Put(bp)
	if err != nil {
		l.mu.Lock()
		if l.err == nil {
			l.err = err
			fmt.Fprintf(os.Stderr, "easyjob _node: ledger write: %v\n", err)
		}
		l.mu.Unlock()
	}
}

func (l *fileLedger) close() error { return l.f.Close() }

// parseLine parses one ledger line (without the newline).
func parseLine(line []byte) (fire, error) {
	fields := bytes.Fields(line)
	if len(fields) != 7 {
		return fire{}, fmt.Errorf("ledger line %q: want 7 fields", line)
	}
	var f fire
	var err error
	f.Task = string(fields[0])
	nums := [6]int64{}
	for i := range 6 {
		if nums[i], err = strconv.ParseInt(string(fields[i+1]), 10, 64); err != nil {
			return fire{}, fmt.Errorf("ledger line %q: %w", line, err)
		}
	}
	f.Sched, f.Node, f.Start, f.Attempt, f.Exec, f.Version = nums[0], nums[1], nums[2], int(nums[3]), nums[4], nums[5]
	return f, nil
}

// ledgerTail reads a ledger file incrementally: each poll parses the
// complete lines appended since the last one.
type ledgerTail struct {
	path    string
	proc    int
	off     int64
	partial []byte
	fires   []fire
	bad     int
	intern  map[string]string
}

func newLedgerTail(path string, proc int, intern map[string]string) *ledgerTail {
	return &ledgerTail{path: path, proc: proc, intern: intern}
}

// poll reads what was appended; it returns how many new fires it parsed.
func (t *ledgerTail) poll() int {
	f, err := os.Open(t.path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return 0
	}
	data, err := io.ReadAll(f)
	if err != nil || len(data) == 0 {
		return 0
	}
	t.off += int64(len(data))
	data = append(t.partial, data...)
	n := 0
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		if fr, err := parseLine(data[:i]); err == nil {
			fr.Proc = t.proc
			if s, ok := t.intern[fr.Task]; ok {
				fr.Task = s
			} else if t.intern != nil {
				t.intern[fr.Task] = fr.Task
			}
			t.fires = append(t.fires, fr)
			n++
		} else {
			t.bad++
		}
		data = data[i+1:]
	}
	t.partial = append([]byte(nil), data...)
	return n
}
