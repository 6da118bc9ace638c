package harness

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
)

// fileLedger appends one line per fire to a file opened with O_APPEND, one
// write(2) per line: a line is either wholly in the file or not at all, and
// everything written survives a SIGKILL of the process.
type fileLedger struct {
	f    *os.File
	mu   sync.Mutex // only guards err
	err  error
	bufs sync.Pool
}

// openFileLedger opens (creates) the ledger file at path for appending.
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
