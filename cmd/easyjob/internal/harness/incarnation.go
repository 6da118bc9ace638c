package harness

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// incarnation is one OS process of a node slot (a slot restarted after a
// kill gets a new incarnation, a new node id and its own ledger file).
type incarnation struct {
	Idx        int // index in procCluster.incs; fire.Proc refers to it
	Slot, Gen  int
	Name       string
	Pid        int
	ledgerPath string
	statsPath  string
	logPath    string
	cmd        *exec.Cmd
	tail       *ledgerTail
	StartedAt  time.Time

	mu       sync.Mutex
	expected bool // the harness killed or stopped it on purpose
	frozen   bool
	exitedAt time.Time
	state    *os.ProcessState
	waitErr  error
	done     chan struct{}
}

func (i *incarnation) exited() bool {
	select {
	case <-i.done:
		return true
	default:
		return false
	}
}

// isFrozen reports whether the harness stopped inc with SIGSTOP and has
// not resumed it yet.
func (i *incarnation) isFrozen() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.frozen
}

// rusage returns CPU seconds (user+system) and peak RSS (bytes) of an
// exited process.
func (i *incarnation) rusage() (cpu float64, rss int64, ok bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.state == nil {
		return 0, 0, false
	}
	ru, isRU := i.state.SysUsage().(*syscall.Rusage)
	if !isRU {
		return 0, 0, false
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	return cpu, ru.Maxrss * 1024, true // Linux: Maxrss in KiB
}

// exitInfo describes how the process ended (empty while it runs).
func (i *incarnation) exitInfo() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.state == nil {
		if i.waitErr != nil {
			return i.waitErr.Error()
		}
		return ""
	}
	return i.state.String()
}

// stats returns the last stats of inc.
func (i *incarnation) stats() (storeStats, bool) { return readStats(i.statsPath) }

// lastLog returns the last n lines of the incarnation's log.
func (i *incarnation) lastLog(n int) []string {
	b, err := os.ReadFile(i.logPath)
	if err != nil {
		return nil
	}
	var lines []string
	start := len(b)
	for k := 0; k < n && start > 0; k++ {
		end := start
		if end > 0 && b[end-1] == '\n' {
			end--
		}
		s := end
		for s > 0 && b[s-1] != '\n' {
			s--
		}
		if end == 0 {
			break // nothing left before this point
		}
		lines = append([]string{string(b[s:end])}, lines...)
		start = s
	}
	return lines
}
