package harness

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// procCluster runs node processes of this binary (its hidden NodeCommand).
type procCluster struct {
	bin    string
	dir    string // ledgers, stats and logs
	params nodeParams
	extra  []string // more NodeCommand flags

	mu     sync.Mutex
	incs   []*incarnation
	slots  []*incarnation // current incarnation per slot
	intern map[string]string
}

// newProcCluster prepares dir for up to slots node processes. It copies
// this binary into dir first, so that every node of the run (restarts
// included) runs the same code as the harness that migrated the database,
// even if the binary is rebuilt meanwhile.
func newProcCluster(dir string, p nodeParams, slots int) (*procCluster, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this binary: %w", err)
	}
	bin := filepath.Join(dir, "easyjob-node")
	if err := copyFile(self, bin, 0o755); err != nil {
		return nil, fmt.Errorf("pin node binary: %w", err)
	}
	return &procCluster{bin: bin, dir: dir, params: p, slots: make([]*incarnation, slots), intern: map[string]string{}}, nil
}

// copyFile copies from to to, created with mode.
func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// start starts a new incarnation of slot.
func (c *procCluster) start(slot int) (*incarnation, error) {
	c.mu.Lock()
	gen := 0
	if prev := c.slots[slot]; prev != nil {
		gen = prev.Gen + 1
	}
	inc := &incarnation{Idx: len(c.incs), Slot: slot, Gen: gen, Name: fmt.Sprintf("p%d.%d", slot, gen), done: make(chan struct{})}
	c.mu.Unlock()
	base := filepath.Join(c.dir, inc.Name)
	inc.ledgerPath, inc.statsPath, inc.logPath = base+".ledger", base+".stats.json", base+".log"
	logf, err := os.Create(inc.logPath)
	if err != nil {
		return nil, err
	}
	args := append([]string{NodeCommand}, c.params.args()...)
	args = append(args, "--ledger", inc.ledgerPath, "--stats", inc.statsPath, "--name", inc.Name)
	args = append(args, c.extra...)
	cmd := exec.Command(c.bin, args...) //nolint:noctx // a node process lives until the harness signals it, not until a context ends
	cmd.Stdout, cmd.Stderr = logf, logf
	// The node dies with the harness, even if the harness is SIGKILLed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start node %s: %w", inc.Name, err)
	}
	inc.cmd, inc.Pid, inc.StartedAt = cmd, cmd.Process.Pid, time.Now()
	c.mu.Lock()
	inc.tail = newLedgerTail(inc.ledgerPath, inc.Idx, c.intern)
	c.incs = append(c.incs, inc)
	c.slots[slot] = inc
	c.mu.Unlock()
	go func() {
		err := cmd.Wait()
		logf.Close()
		inc.mu.Lock()
		inc.state, inc.waitErr, inc.exitedAt = cmd.ProcessState, err, time.Now()
		inc.mu.Unlock()
		close(inc.done)
	}()
	return inc, nil
}

// signal sends sig to inc; expected marks it as the harness's doing.
func (c *procCluster) signal(inc *incarnation, sig syscall.Signal) error {
	inc.mu.Lock()
	inc.expected = true
	switch sig {
	case syscall.SIGSTOP:
		inc.frozen = true
	case syscall.SIGCONT:
		inc.frozen = false
	}
	inc.mu.Unlock()
	if inc.exited() {
		return fmt.Errorf("%s already exited", inc.Name)
	}
	return inc.cmd.Process.Signal(sig)
}

// current returns the running incarnation of each slot (nil when down).
func (c *procCluster) current() []*incarnation {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*incarnation, len(c.slots))
	for i, inc := range c.slots {
		if inc != nil && !inc.exited() {
			out[i] = inc
		}
	}
	return out
}

func (c *procCluster) all() []*incarnation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*incarnation(nil), c.incs...)
}

// stopAll ends every running process gracefully: SIGCONT (a frozen one
// cannot handle SIGTERM), SIGTERM, then SIGKILL after grace.
func (c *procCluster) stopAll(grace time.Duration) {
	incs := c.all()
	for _, inc := range incs {
		if !inc.exited() {
			_ = c.signal(inc, syscall.SIGCONT)
			_ = c.signal(inc, syscall.SIGTERM)
		}
	}
	deadline := time.After(grace)
	for _, inc := range incs {
		select {
		case <-inc.done:
		case <-deadline:
			for _, j := range incs {
				if !j.exited() {
					_ = c.signal(j, syscall.SIGKILL)
				}
			}
			<-inc.done
		}
	}
}

// poll reads new ledger lines of every incarnation; it returns the number
// of fires read so far.
func (c *procCluster) poll() int {
	total := 0
	for _, inc := range c.all() {
		inc.tail.poll()
		total += len(inc.tail.fires)
	}
	return total
}

// fires returns every fire read so far (call poll first).
func (c *procCluster) fires() []fire {
	var out []fire
	for _, inc := range c.all() {
		out = append(out, inc.tail.fires...)
	}
	return out
}
