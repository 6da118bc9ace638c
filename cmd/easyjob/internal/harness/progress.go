package harness

import (
	"fmt"
	"os"
)

// progress prints a status line on stderr: rewritten in place on a
// terminal, one line per update otherwise.
type progress struct {
	quiet bool
	tty   bool
	dirty bool
}

func newProgress(quiet bool) *progress {
	p := &progress{quiet: quiet}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		p.tty = true
	}
	return p
}

func (p *progress) printf(format string, a ...any) {
	if p.quiet {
		return
	}
	line := fmt.Sprintf(format, a...)
	if p.tty {
		fmt.Fprint(os.Stderr, "\r\033[K"+line)
		p.dirty = true
		return
	}
	fmt.Fprintln(os.Stderr, line)
}

// done ends an in-place line.
func (p *progress) done() {
	if p.tty && p.dirty {
		fmt.Fprintln(os.Stderr)
		p.dirty = false
	}
}
