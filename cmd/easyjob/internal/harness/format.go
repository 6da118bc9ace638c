package harness

import (
	"fmt"
	"strings"
	"time"
)

// fmtTime prints a wall time with milliseconds.
func fmtTime(ns int64) string { return time.Unix(0, ns).UTC().Format("15:04:05.000") }

// fmtFire prints a ledger entry the way it is in the ledger file, plus
// readable times.
func fmtFire(f fire, procName func(int) string) string {
	return fmt.Sprintf("%s [ledger %q] sched %s start %s lag %s node %d proc %s",
		f.Task, strings.TrimSuffix(string(appendLine(nil, f)), "\n"), fmtTime(f.Sched), fmtTime(f.Start),
		fmtMS(ms(f.Lag())), f.Node, procName(f.Proc))
}

// mib formats bytes as MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fmtIDs prints node ids comma-separated ("-" for none).
func fmtIDs(ids []int64) string {
	if len(ids) == 0 {
		return "-"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}
