package harness

import (
	"bytes"
	"io"
	"os"
)

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

// newLedgerTail reads the ledger at path of process incarnation proc;
// intern shares task name strings between tails.
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
