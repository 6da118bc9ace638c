package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is the unit of the times in /proc/PID/stat. Linux reports
// them in USER_HZ, which is 100 on every mainstream architecture; the
// harness assumes it rather than calling sysconf(_SC_CLK_TCK).
const clockTicks = 100

// procStat is what the harness reads of one /proc/PID/stat line.
type procStat struct {
	Comm           string
	PPid           int
	UTime, STime   int64 // fields 14, 15: this process, in clock ticks
	CUTime, CSTime int64 // fields 16, 17: its waited-for (reaped) children
}

// parseProcStat parses a /proc/PID/stat line. The command name (field 2)
// is in parentheses and may itself hold spaces and parentheses, so the
// fields are counted from the last ')'.
func parseProcStat(line string) (procStat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("proc stat %.40q: no (comm)", line)
	}
	// f[0] is field 3 (state), so field n is f[n-3].
	f := strings.Fields(line[end+1:])
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("proc stat %.40q: %d fields after comm, want >= 15", line, len(f))
	}
	var nums [5]int64
	for i, n := range []int{4, 14, 15, 16, 17} {
		v, err := strconv.ParseInt(f[n-3], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("proc stat field %d: %w", n, err)
		}
		nums[i] = v
	}
	return procStat{Comm: line[open+1 : end], PPid: int(nums[0]),
		UTime: nums[1], STime: nums[2], CUTime: nums[3], CSTime: nums[4]}, nil
}

// readProcStat reads and parses /proc/<pid>/stat under root ("/proc").
func readProcStat(root string, pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, fmt.Errorf("read proc stat: %w", err)
	}
	return parseProcStat(string(b))
}

// treeCPUTicks returns the CPU time of process pid and its children in
// clock ticks: its own utime+stime, cutime+cstime (children it already
// reaped, e.g. exited PostgreSQL backends) and the utime+stime of every
// live child. Grandchildren still alive are not counted (PostgreSQL
// forks every backend and worker from the postmaster).
func treeCPUTicks(root string, pid int) (int64, error) {
	top, err := readProcStat(root, pid)
	if err != nil {
		return 0, err
	}
	total := top.UTime + top.STime + top.CUTime + top.CSTime
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, fmt.Errorf("list processes: %w", err)
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		st, err := readProcStat(root, child)
		if err != nil || st.PPid != pid {
			continue // not a child, or exited meanwhile (then in top's cutime)
		}
		total += st.UTime + st.STime
	}
	return total, nil
}
