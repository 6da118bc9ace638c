package harness

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// fileLedger appends one line per fire to a file opened with O_APPEND.
// Unbuffered (chaos), each line is one write(2): a line is either wholly in
// the file or not at all, and everything written survives a SIGKILL of
// the process. Buffered (bench, which kills nothing), lines collect in
// memory and go out every flushEvery and at close: a write per fire, all
// of them to one file, would make the measuring cost a sizeable part of
// what it measures (the appends serialise on the file).
type fileLedger struct {
	f    *os.File
	bufs sync.Pool

	mu  sync.Mutex
	err error
	buf []byte // buffered mode: lines not yet written

	stop chan struct{}
	wg   sync.WaitGroup
}

// openFileLedger opens (creates) the ledger file at path for appending;
// flushEvery > 0 buffers lines for that long (see fileLedger).
func openFileLedger(path string, flushEvery time.Duration) (*fileLedger, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	l := &fileLedger{f: f, bufs: sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}}
	if flushEvery > 0 {
		l.stop = make(chan struct{})
		// Room for a burst's lines (6 667 fires: 0.5 MiB): grown in the
		// burst, the buffer's copies were allocations of the measuring
		// that count toward the node's next garbage collection.
		l.buf = make([]byte, 0, ledgerBuffer)
		l.wg.Go(func() { l.flushLoop(flushEvery) })
	}
	return l, nil
}

// appendLine formats f as "task sched node start attempt exec version
// [end]\n" (times in unix nanoseconds; end only for a run recorded as it
// ended).
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
	if f.End != 0 {
		b = append(b, ' ')
		b = strconv.AppendInt(b, f.End, 10)
	}
	return append(b, '\n')
}

func (l *fileLedger) record(f fire) {
	if l.stop != nil {
		l.mu.Lock()
		l.buf = appendLine(l.buf, f)
		l.mu.Unlock()
		return
	}
	bp := l.bufs.Get().(*[]byte)
	b := appendLine((*bp)[:0], f)
	_, err := l.f.Write(b) // one write(2): O_APPEND makes it atomic for a regular file
	*bp = b
	l.bufs.Put(bp)
	if err != nil {
		l.fail(err)
	}
}

func (l *fileLedger) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
		fmt.Fprintf(os.Stderr, "easyjob _node: ledger write: %v\n", err)
	}
}

// ledgerBuffer is the capacity each of a buffered ledger's two buffers
// starts with.
const ledgerBuffer = 2 << 20

// flushLoop writes the buffered lines every every until close.
func (l *fileLedger) flushLoop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	out := make([]byte, 0, ledgerBuffer)
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		out = l.flush(out)
	}
}

// flush writes what is buffered; spare is reused as the next buffer.
func (l *fileLedger) flush(spare []byte) []byte {
	l.mu.Lock()
	out := l.buf
	l.buf = spare[:0]
	l.mu.Unlock()
	if len(out) > 0 {
		if _, err := l.f.Write(out); err != nil {
			l.fail(err)
		}
	}
	return out
}

func (l *fileLedger) close() error {
	if l.stop != nil {
		close(l.stop)
		l.wg.Wait()
		l.flush(nil)
	}
	return l.f.Close()
}

// parseLine parses one ledger line (without the newline).
func parseLine(line []byte) (f fire, err error) {
	fields := bytes.Fields(line)
	if len(fields) != 7 && len(fields) != 8 {
		return fire{}, fmt.Errorf("ledger line %q: want 7 or 8 fields", line)
	}
	if len(fields) == 8 {
		end, err := strconv.ParseInt(string(fields[7]), 10, 64)
		if err != nil {
			return fire{}, fmt.Errorf("ledger line %q: %w", line, err)
		}
		defer func() { f.End = end }()
	}
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
